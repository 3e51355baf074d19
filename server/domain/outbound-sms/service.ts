import { MAX_QUEUE_ITEMS_PER_READ } from '../../../contract/device/sms-queue.ts';
import { AppError } from '../../../contract/common/errors.ts';
import { sql, type Selectable } from 'kysely';
import { type DB, type Db } from '../db.ts';
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
  em: Db,
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
  const k = em;
  if (input.deviceId != null) {
    const found = await k.selectFrom('devices').select('id').where('id', '=', input.deviceId).where('brand_id', '=', input.brandId).where('status', '=', 'active').execute();
    if (found.length === 0) throw new AppError('DEVICE_NOT_FOUND');
  }
  // The id first, so the ciphertexts can be bound to the row they go into.
  const reserved = await k
    .selectNoFrom((eb) => eb.fn<string>('nextval', [eb.fn('pg_get_serial_sequence', [eb.val('outbound_sms'), eb.val('id')])]).as('id'))
    .executeTakeFirstOrThrow();
  const id = Number(reserved.id);
  const b = outboundBinding(input.brandId, id);
  const row = await k
    .insertInto('outbound_sms')
    .values({
      id,
      brand_id: input.brandId,
      device_id: input.deviceId ?? null,
      phone_encrypted: cipher.encrypt(phone, PHONE_CONTEXT, b),
      message_encrypted: cipher.encrypt(message, MESSAGE_CONTEXT, b),
      expires_at: sql<Date>`now() + make_interval(mins => ${ttl})`,
    })
    .returning(['id', 'expires_at'])
    .executeTakeFirstOrThrow();
  return { id: row.id, expiresAt: row.expires_at };
}

/**
 * Hands the calling device up to 20 waiting items of its brand (addressed to it
 * or to any device), oldest first, and leases them to it. `FOR UPDATE SKIP
 * LOCKED` makes concurrent polls from several phones take disjoint sets: a row
 * one poll is leasing is skipped by the other, never handed out twice.
 */
export async function leaseOutboundSms(
  em: Db,
  cipher: PiiCipher,
  caller: { brandId: number; deviceId: number },
  opts: { limit?: number; leaseMinutes?: number } = {},
): Promise<LeasedSms[]> {
  const limit = Math.min(opts.limit ?? MAX_LEASED_PER_READ, MAX_LEASED_PER_READ);
  const rows = await em
    .with('picked', (qb) =>
      qb
        .selectFrom('outbound_sms')
        .select('id')
        .where('brand_id', '=', caller.brandId)
        .where('status', '=', 'pending')
        .where('expires_at', '>', sql<Date>`now()`)
        .where((eb) => eb.or([eb('device_id', 'is', null), eb('device_id', '=', caller.deviceId)]))
        // A brand-wide item goes only to a device of its mode (a device's own items have its mode).
        .where('mode', '=', (eb) => eb.selectFrom('devices as d').select('d.mode').where('d.id', '=', caller.deviceId))
        .orderBy('created_at')
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .updateTable('outbound_sms as o')
    .from('picked')
    .set({
      status: 'leased',
      leased_by_device_id: caller.deviceId,
      leased_at: sql<Date>`now()`,
      lease_expires_at: sql<Date>`now() + make_interval(mins => ${opts.leaseMinutes ?? DEFAULT_LEASE_MINUTES})`,
      attempts: sql<number>`o.attempts + 1`,
      updated_at: sql<Date>`now()`,
    })
    .whereRef('o.id', '=', 'picked.id')
    .returning(['o.id', 'o.phone_encrypted', 'o.message_encrypted', 'o.created_at', 'o.lease_expires_at', 'o.expires_at'])
    .execute();
  return rows
    .map((r) => ({
      id: r.id,
      phone: cipher.decrypt(r.phone_encrypted, PHONE_CONTEXT, outboundBinding(caller.brandId, r.id)),
      message: cipher.decrypt(r.message_encrypted, MESSAGE_CONTEXT, outboundBinding(caller.brandId, r.id)),
      createdAt: r.created_at,
      // Just leased: the lease has its expiry.
      leaseExpiresAt: r.lease_expires_at!,
      expiresAt: r.expires_at,
    }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id);
}

const STATE_COLUMNS = ['id', 'status', 'sent_at', 'delivered_at', 'failed_at', 'failure_reason', 'updated_at'] as const;
type StateRow = Pick<Selectable<DB['outbound_sms']>, (typeof STATE_COLUMNS)[number]>;

const toState = (r: StateRow): OutboundSmsState => ({
  id: r.id,
  status: r.status,
  sentAt: r.sent_at,
  deliveredAt: r.delivered_at,
  failedAt: r.failed_at,
  failureReason: r.failure_reason,
  updatedAt: r.updated_at,
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
  em: Db,
  caller: { brandId: number; deviceId: number },
  input: { id: number; status: OutboundSmsReport; reason?: string | null },
): Promise<OutboundSmsState> {
  const reason = input.status === 'failed' ? (input.reason ?? '').trim().slice(0, MAX_FAILURE_REASON_LENGTH) || null : null;
  if (input.status === 'failed' && !reason) throw new AppError('VALIDATION_ERROR', 'reason is required when status is failed', { field: 'reason' });
  // Two rounds at most: a status that changed between the UPDATE and the read
  // (the lease reaper putting the item back to pending) is simply tried again.
  for (let round = 0; ; round++) {
    const now = sql<Date>`now()`;
    const status = input.status;
    const updated = await em
      .updateTable('outbound_sms')
      .set({
        status,
        // Each report sets only its own times (and a failure its reason); the others keep theirs.
        ...(status === 'sent' || status === 'delivered' ? { sent_at: sql<Date>`COALESCE(sent_at, now())` } : {}),
        ...(status === 'delivered' ? { delivered_at: now } : {}),
        ...(status === 'failed' ? { failed_at: now, failure_reason: reason } : {}),
        lease_expires_at: null,
        updated_at: now,
      })
      .where('id', '=', input.id)
      .where('brand_id', '=', caller.brandId)
      .where('leased_by_device_id', '=', caller.deviceId)
      .where('status', 'in', [...REPORT_FROM[status]])
      .returning(STATE_COLUMNS)
      .execute();
    if (updated[0]) return toState(updated[0]);
    const current = await em
      .selectFrom('outbound_sms')
      .select(STATE_COLUMNS)
      .where('id', '=', input.id)
      .where('brand_id', '=', caller.brandId)
      .where('leased_by_device_id', '=', caller.deviceId)
      .execute();
    if (!current[0]) throw new AppError('SMS_QUEUE_ITEM_NOT_FOUND');
    const decision = decideReport(current[0].status, input.status);
    if (decision === 'repeat') return toState(current[0]);
    if (decision === 'conflict' || round >= 1) {
      throw new AppError('INVALID_STATE', `Cannot report ${input.status} for an item that is ${current[0].status}`);
    }
  }
}

/** Leases not reported in time go back to `pending` for any device to take. Returns how many. */
export async function reapExpiredLeases(em: Db): Promise<number> {
  const rows = await em
    .updateTable('outbound_sms')
    .set({ status: 'pending', lease_expires_at: null, updated_at: sql<Date>`now()` })
    .where('status', '=', 'leased')
    .where('lease_expires_at', '<=', sql<Date>`now()`)
    .returning('id')
    .execute();
  return rows.length;
}

/**
 * Waiting items past their time-to-live become `expired`. A leased item is left
 * to its lease (the phone may be sending it right now); if the lease runs out it
 * comes back to `pending` and expires on the next sweep.
 */
export async function expireOutboundSms(em: Db): Promise<number> {
  const rows = await em
    .updateTable('outbound_sms')
    .set({ status: 'expired', expired_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
    .where('status', '=', 'pending')
    .where('expires_at', '<=', sql<Date>`now()`)
    .returning('id')
    .execute();
  return rows.length;
}
