import { MAX_QUEUE_ITEMS_PER_READ } from '../../../contract/device/sms-queue.ts';
import { AppError } from '../../../contract/common/errors.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import type { PiiBinding, PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { normalizePhone } from '../customers/normalize.ts';
import type { OutboundSmsStatus } from './entities.ts';
import { REPORT_FROM, decideReport, type OutboundSmsReport } from './transitions.ts';

/** The cap on one queue read: the contract's, so the schema and the service agree. */
const MAX_LEASED_PER_READ = MAX_QUEUE_ITEMS_PER_READ;
/** How long a device has to report an item before it goes back to `pending`. */
const DEFAULT_LEASE_MINUTES = 10;
/** How long an item may wait to be sent before it becomes `expired`. */
const DEFAULT_TTL_MINUTES = 24 * 60;
const MAX_TTL_MINUTES = 7 * 24 * 60;
const MAX_MESSAGE_LENGTH = 1000;
const MAX_FAILURE_REASON_LENGTH = 500;

export const OUTBOUND_PHONE_CONTEXT = 'outbound_sms.phone';
export const OUTBOUND_MESSAGE_CONTEXT = 'outbound_sms.message';
const PHONE_CONTEXT = OUTBOUND_PHONE_CONTEXT;
const MESSAGE_CONTEXT = OUTBOUND_MESSAGE_CONTEXT;

/** Bound to the brand and the row id, reserved from the id sequence before the INSERT. */
export function outboundBinding(brandId: number | string, id: number | string): PiiBinding {
  return { brandId, row: id };
}

export interface LeasedSms {
  id: number;
  phone: string;
  message: string;
  createdAt: Date;
  leaseExpiresAt: Date;
  expiresAt: Date;
}

export interface OutboundSmsState {
  id: number;
  status: OutboundSmsStatus;
  sentAt: Date | null;
  deliveredAt: Date | null;
  failedAt: Date | null;
  failureReason: string | null;
  updatedAt: Date;
}

/**
 * Queues an SMS for the brand's phones to send (admin API and CLI). With a
 * `deviceId` only that device receives it (the item takes its mode); otherwise
 * any live device of the brand.
 */
export async function enqueueOutboundSms(
  em: EntityManager,
  cipher: PiiCipher,
  input: { brandId: number; deviceId?: number | null; phone: string; message: string; ttlMinutes?: number },
): Promise<{ id: number; expiresAt: Date }> {
  const phone = normalizePhone(input.phone);
  if (!phone) throw new AppError('VALIDATION_ERROR', 'Must be a valid phone number', { field: 'phone' });
  const message = input.message.trim();
  if (message === '' || message.length > MAX_MESSAGE_LENGTH) throw new AppError('VALIDATION_ERROR', `Must be 1 to ${MAX_MESSAGE_LENGTH} characters`, { field: 'message' });
  const ttl = input.ttlMinutes ?? DEFAULT_TTL_MINUTES;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_MINUTES) {
    throw new AppError('VALIDATION_ERROR', `Must be a whole number of minutes between 1 and ${MAX_TTL_MINUTES}`, { field: 'ttl_minutes' });
  }
  if (input.deviceId != null) {
    const found = await em.execute("SELECT 1 FROM devices WHERE id = ? AND brand_id = ? AND status = 'active'", [input.deviceId, input.brandId]);
    if (found.length === 0) throw new AppError('DEVICE_NOT_FOUND');
  }
  // The id first, so the ciphertexts can be bound to the row they go into.
  const [reserved] = await em.execute<Array<{ id: string }>>("SELECT nextval(pg_get_serial_sequence('outbound_sms', 'id')) AS id");
  const b = outboundBinding(input.brandId, reserved!.id);
  const rows = await em.execute<Array<{ id: string; expires_at: Date }>>(
    `INSERT INTO outbound_sms (id, brand_id, device_id, phone_encrypted, message_encrypted, expires_at)
     VALUES (?, ?, ?, ?, ?, now() + make_interval(mins => ?))
     RETURNING id, expires_at`,
    [reserved!.id, input.brandId, input.deviceId ?? null, cipher.encrypt(phone, PHONE_CONTEXT, b), cipher.encrypt(message, MESSAGE_CONTEXT, b), ttl],
  );
  return { id: Number(rows[0]!.id), expiresAt: new Date(rows[0]!.expires_at) };
}

/**
 * Hands the calling device up to 20 waiting items of its brand (addressed to it
 * or to any device), oldest first, and leases them to it. `FOR UPDATE SKIP
 * LOCKED` makes concurrent polls from several phones take disjoint sets: a row
 * one poll is leasing is skipped by the other, never handed out twice.
 */
export async function leaseOutboundSms(
  em: EntityManager,
  cipher: PiiCipher,
  caller: { brandId: number; deviceId: number },
  opts: { limit?: number; leaseMinutes?: number } = {},
): Promise<LeasedSms[]> {
  const limit = Math.min(opts.limit ?? MAX_LEASED_PER_READ, MAX_LEASED_PER_READ);
  const rows = await em.execute<Array<{ id: string; phone_encrypted: string; message_encrypted: string; created_at: Date; lease_expires_at: Date; expires_at: Date }>>(
    `WITH picked AS (
       SELECT id FROM outbound_sms
        WHERE brand_id = ? AND status = 'pending' AND expires_at > now()
          AND (device_id IS NULL OR device_id = ?)
          -- A brand-wide item goes only to a device of its mode (a device's own items have its mode).
          AND mode = (SELECT d.mode FROM devices d WHERE d.id = ?)
        ORDER BY created_at, id
        LIMIT ?
        FOR UPDATE SKIP LOCKED
     )
     UPDATE outbound_sms o
        SET status = 'leased', leased_by_device_id = ?, leased_at = now(),
            lease_expires_at = now() + make_interval(mins => ?), attempts = o.attempts + 1, updated_at = now()
       FROM picked WHERE o.id = picked.id
     RETURNING o.id, o.phone_encrypted, o.message_encrypted, o.created_at, o.lease_expires_at, o.expires_at`,
    [caller.brandId, caller.deviceId, caller.deviceId, limit, caller.deviceId, opts.leaseMinutes ?? DEFAULT_LEASE_MINUTES],
  );
  return rows
    .map((r) => ({
      id: Number(r.id),
      phone: cipher.decrypt(r.phone_encrypted, PHONE_CONTEXT, outboundBinding(caller.brandId, r.id)),
      message: cipher.decrypt(r.message_encrypted, MESSAGE_CONTEXT, outboundBinding(caller.brandId, r.id)),
      createdAt: new Date(r.created_at),
      leaseExpiresAt: new Date(r.lease_expires_at),
      expiresAt: new Date(r.expires_at),
    }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id);
}

type StateRow = { id: string; status: OutboundSmsStatus; sent_at: Date | null; delivered_at: Date | null; failed_at: Date | null; failure_reason: string | null; updated_at: Date };
const STATE_COLUMNS = 'id, status, sent_at, delivered_at, failed_at, failure_reason, updated_at';

const toState = (r: StateRow): OutboundSmsState => ({
  id: Number(r.id),
  status: r.status,
  sentAt: r.sent_at && new Date(r.sent_at),
  deliveredAt: r.delivered_at && new Date(r.delivered_at),
  failedAt: r.failed_at && new Date(r.failed_at),
  failureReason: r.failure_reason,
  updatedAt: new Date(r.updated_at),
});

/**
 * Records the device's report on an item it holds (or held last). Another
 * device's item, another brand's, or one never leased to the caller is
 * SMS_QUEUE_ITEM_NOT_FOUND, the same answer as an unknown id. A repeated report
 * answers the current state; a contradicting one (delivered after failed) is
 * INVALID_STATE. The move is one conditional UPDATE, so racing reports cannot
 * both apply.
 */
export async function reportOutboundSms(
  em: EntityManager,
  caller: { brandId: number; deviceId: number },
  input: { id: number; status: OutboundSmsReport; reason?: string | null },
): Promise<OutboundSmsState> {
  const reason = input.status === 'failed' ? (input.reason ?? '').trim().slice(0, MAX_FAILURE_REASON_LENGTH) || null : null;
  if (input.status === 'failed' && !reason) throw new AppError('VALIDATION_ERROR', 'reason is required when status is failed', { field: 'reason' });
  // Two rounds at most: a status that changed between the UPDATE and the read
  // (the lease reaper putting the item back to pending) is simply tried again.
  for (let round = 0; ; round++) {
    const updated = await em.execute<StateRow[]>(
      `UPDATE outbound_sms SET
          status = ?,
          sent_at = CASE WHEN ? IN ('sent', 'delivered') THEN COALESCE(sent_at, now()) ELSE sent_at END,
          delivered_at = CASE WHEN ? = 'delivered' THEN now() ELSE delivered_at END,
          failed_at = CASE WHEN ? = 'failed' THEN now() ELSE failed_at END,
          failure_reason = CASE WHEN ? = 'failed' THEN ? ELSE failure_reason END,
          lease_expires_at = NULL,
          updated_at = now()
        WHERE id = ? AND brand_id = ? AND leased_by_device_id = ? AND status = ANY(ARRAY[?]::text[])
        RETURNING ${STATE_COLUMNS}`,
      [input.status, input.status, input.status, input.status, input.status, reason, input.id, caller.brandId, caller.deviceId, [...REPORT_FROM[input.status]]],
    );
    if (updated[0]) return toState(updated[0]);
    const current = await em.execute<StateRow[]>(
      `SELECT ${STATE_COLUMNS} FROM outbound_sms WHERE id = ? AND brand_id = ? AND leased_by_device_id = ?`,
      [input.id, caller.brandId, caller.deviceId],
    );
    if (!current[0]) throw new AppError('SMS_QUEUE_ITEM_NOT_FOUND');
    const decision = decideReport(current[0].status, input.status);
    if (decision === 'repeat') return toState(current[0]);
    if (decision === 'conflict' || round >= 1) {
      throw new AppError('INVALID_STATE', `Cannot report ${input.status} for an item that is ${current[0].status}`);
    }
  }
}

/** Leases not reported in time go back to `pending` for any device to take. Returns how many. */
export async function reapExpiredLeases(em: EntityManager): Promise<number> {
  const rows = await em.execute(
    `UPDATE outbound_sms SET status = 'pending', lease_expires_at = NULL, updated_at = now()
      WHERE status = 'leased' AND lease_expires_at <= now()
      RETURNING id`,
  );
  return rows.length;
}

/**
 * Waiting items past their time-to-live become `expired`. A leased item is left
 * to its lease (the phone may be sending it right now); if the lease runs out it
 * comes back to `pending` and expires on the next sweep.
 */
export async function expireOutboundSms(em: EntityManager): Promise<number> {
  const rows = await em.execute(
    `UPDATE outbound_sms SET status = 'expired', expired_at = now(), updated_at = now()
      WHERE status = 'pending' AND expires_at <= now()
      RETURNING id`,
  );
  return rows.length;
}
