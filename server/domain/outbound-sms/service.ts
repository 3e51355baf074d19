import { MAX_QUEUE_ITEMS_PER_READ } from '../../../contract/device/sms-queue.ts';
import { AppError } from '../../../contract/common/errors.ts';
import { type Db } from '../db.ts';
import type { PiiBinding, PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { normalizePhone } from '../customers/normalize.ts';
import type { OutboundSmsStatus } from './entities.ts';
import { REPORT_FROM, decideReport, type OutboundSmsReport } from './transitions.ts';
import {
  applyReport,
  expirePending,
  insertOutboundSms,
  isActiveBrandDevice,
  leaseWaiting,
  reserveOutboundSmsId,
  returnExpiredLeases,
  selectCallerItem,
  type StateRow,
} from './queries.ts';

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
  if (input.deviceId != null && !(await isActiveBrandDevice(em, input.brandId, input.deviceId))) throw new AppError('DEVICE_NOT_FOUND');
  // The id first, so the ciphertexts can be bound to the row they go into.
  const id = await reserveOutboundSmsId(em);
  const b = outboundBinding(input.brandId, id);
  const row = await insertOutboundSms(em, {
    id,
    brandId: input.brandId,
    deviceId: input.deviceId ?? null,
    phoneEncrypted: cipher.encrypt(phone, PHONE_CONTEXT, b),
    messageEncrypted: cipher.encrypt(message, MESSAGE_CONTEXT, b),
    ttlMinutes: ttl,
  });
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
  const rows = await leaseWaiting(em, caller, limit, opts.leaseMinutes ?? DEFAULT_LEASE_MINUTES);
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
    const updated = await applyReport(em, caller, { id: input.id, status: input.status, reason }, REPORT_FROM[input.status]);
    if (updated) return toState(updated);
    const current = await selectCallerItem(em, caller, input.id);
    if (!current) throw new AppError('SMS_QUEUE_ITEM_NOT_FOUND');
    const decision = decideReport(current.status, input.status);
    if (decision === 'repeat') return toState(current);
    if (decision === 'conflict' || round >= 1) {
      throw new AppError('INVALID_STATE', `Cannot report ${input.status} for an item that is ${current.status}`);
    }
  }
}

/** Leases not reported in time go back to `pending` for any device to take. Returns how many. */
export async function reapExpiredLeases(em: Db): Promise<number> {
  return returnExpiredLeases(em);
}

/**
 * Waiting items past their time-to-live become `expired`. A leased item is left
 * to its lease (the phone may be sending it right now); if the lease runs out it
 * comes back to `pending` and expires on the next sweep.
 */
export async function expireOutboundSms(em: Db): Promise<number> {
  return expirePending(em);
}
