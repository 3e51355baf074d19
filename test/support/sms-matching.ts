import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import type { TestContext } from './harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from './device.ts';
import { seedGateway, seedTransaction, type GatewayPreset, type SeedStatus } from './seed.ts';
import { startCheckoutTransaction } from '../../server/domain/checkout/pay.ts';
import { getTransactionByTrxId, type TransactionRecord } from '../../server/domain/payments/transactions.ts';

/**
 * Helpers of the SMS matching tests: a brand with a paired phone and a manual
 * gateway, realistic "money received" SMS, and forwarding through the device API.
 */

/** A fresh gateway trx id in the shape bKash uses (10 upper-case letters and digits). */
export function newGatewayTrxId(prefix = 'B'): string {
  return `${prefix}${randomBytes(5).toString('hex').toUpperCase()}`.slice(0, 10);
}

/** A numeric trx id as Rocket uses. */
export function newNumericTrxId(): string {
  return String(1_000_000_000 + (randomBytes(4).readUInt32BE() % 8_999_999_999)).slice(0, 10);
}

/** "1250.00" -> "1,250.00", as the wallets write amounts. */
export function grouped(amount: string): string {
  const [int, frac] = amount.split('.');
  return `${int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
}

/**
 * Money-received SMS bodies in the wallets' real shapes (see test/fixtures/sms/).
 * bKash's is its older wording without fee and balance, so that tests about
 * matching are not also tests of the balance chain (a fixed balance breaks the
 * chain from a phone's second SMS on; creditWithBalance and the chain tests
 * cover balances). Nagad and Rocket always print a balance: one large enough
 * for any amount here, so a phone's first SMS never looks impossible.
 */
export const smsBodies = {
  bkash: (amount: string, trxId: string, from = '01712345678') =>
    `You have received Tk ${grouped(amount)} from ${from}. Ref ${randomBytes(2).toString('hex')}. TrxID ${trxId} at ${bdNow('dmy')}`,
  nagad: (amount: string, trxId: string, from = '01712345678') =>
    `Money Received.\nAmount: Tk ${grouped(amount)}\nSender: ${from}\nRef: N/A\nTxnID: ${trxId}\nBalance: Tk 9,999,999.00\n${bdNow('dmy')}`,
  rocket: (amount: string, trxId: string, from = '017123456785') =>
    `Tk${grouped(amount)} received from A/C:${from} Fee:Tk0, Your A/C Balance: Tk9,999,999.00 TxnId:${trxId} Date:${bdNow('rocket')}.`,
} as const;

/**
 * A moment as the wallets print it in their SMS, in Bangladesh time (UTC+6): `dmy` as bKash and Nagad
 * (`28/11/2026 14:32`), `rocket` as Rocket (`28-NOV-26 02:32:10 pm`). The matcher refuses an SMS its wallet
 * dated before the payment existed, so test messages carry the time they are sent at.
 */
export function bdNow(format: 'dmy' | 'rocket', at: Date = new Date()): string {
  const bd = new Date(at.getTime() + 6 * 3_600_000);
  const p = (n: number) => String(n).padStart(2, '0');
  if (format === 'dmy') return `${p(bd.getUTCDate())}/${p(bd.getUTCMonth() + 1)}/${bd.getUTCFullYear()} ${p(bd.getUTCHours())}:${p(bd.getUTCMinutes())}`;
  const months = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
  const h = bd.getUTCHours();
  return `${p(bd.getUTCDate())}-${months[bd.getUTCMonth()]}-${p(bd.getUTCFullYear() % 100)} ${p(h % 12 || 12)}:${p(bd.getUTCMinutes())}:${p(bd.getUTCSeconds())} ${h < 12 ? 'am' : 'pm'}`;
}

const AMOUNT_GROUP = String.raw`(?:tk\.?|৳)\s*(?<amount>\d[\d,]*(?:\.\d{1,2})?)`;
/** bKash's money-received wording, reading the balance and fee too (the default template reads neither). */
export const creditTemplate = {
  pattern: String.raw`^\s*You\s+have\s+received\s+${AMOUNT_GROUP}\s+from\s+(?<sender_number>\+?[\dx*]{6,15})\.[^\n]*?\bFee\s+Tk\s*(?<fee>\d[\d,]*(?:\.\d{1,2})?)\.\s*Balance\s+Tk\s*(?<balance>\S+?)\.?\s+TrxID\s*:?\s*(?<trx_id>[a-z0-9]{8,12})\b`,
  flags: 'i',
  kind: 'received',
};
/** bKash's Send Money wording: money out, balance chain evidence only. */
export const sendMoneyTemplate = {
  pattern: String.raw`^\s*Send\s+Money\s+${AMOUNT_GROUP}\s+to\s+(?<sender_number>\d{11})\s+successful\.\s*Fee\s+Tk\s*(?<fee>\d[\d,]*(?:\.\d{1,2})?)\.\s*Balance\s+Tk\s*(?<balance>\d[\d,]*(?:\.\d{1,2})?)\.(?:\s*TrxID\s+(?<trx_id>[A-Z0-9]{8,12}))?`,
  flags: 'i',
  direction: 'out' as const,
  kind: 'send_money',
};
/** A money-received SMS with the balance given (read by creditTemplate). */
export const creditWithBalance = (amount: string, trxId: string, balance: string, from = '01712345515', fee = '0.00') =>
  `You have received Tk ${grouped(amount)} from ${from}. Ref gift. Fee Tk ${fee}. Balance Tk ${balance}. TrxID ${trxId} at ${bdNow('dmy')}`;
/** A Send Money SMS (read by sendMoneyTemplate). */
export const sendMoneyWithBalance = (amount: string, to: string, balance: string, fee = '5.00') =>
  `Send Money Tk ${grouped(amount)} to ${to} successful. Fee Tk ${fee}. Balance Tk ${balance}. TrxID ${newGatewayTrxId('S')}`;

export const officialSender = { bkash: 'bKash', nagad: 'NAGAD', rocket: '16216' } as const;

export interface SmsScene {
  brandId: number;
  apiKey: string;
  device: PairedDevice;
  gateway: GatewayView;
}

/** A brand with one paired phone and a manual gateway (default bKash-like). */
export async function smsScene(t: TestContext, preset: GatewayPreset = 'bkash'): Promise<SmsScene> {
  const { brandId, apiKey } = await t.createBrand('SMS Brand');
  const device = await pairDevice(t, { brandId });
  const gateway = await seedGateway(t, preset);
  return { brandId, apiKey, device, gateway };
}

/** A payment with a transaction on the scene's gateway. */
export async function seedPayment(t: TestContext, scene: SmsScene, opts: { amount: string; status?: SeedStatus; gatewayTrxId?: string | null; senderNumber?: string }) {
  return seedTransaction(t, { apiKey: scene.apiKey, gateway: scene.gateway, status: opts.status ?? 'pending', amount: opts.amount, gatewayTrxId: opts.gatewayTrxId, senderNumber: opts.senderNumber });
}

/**
 * A customer reporting payment of `paymentId` on the checkout, with the gateway
 * trx id their wallet gave them: the one way a manual transaction gets a claim.
 * Only the commit: the look-up of stored SMS the checkout runs after it (its
 * matching seam) is left to the caller, so a test can race it or run something
 * before it.
 */
export async function submitAtCheckout(t: TestContext, paymentId: string, opts: { gateway: GatewayView; gatewayTrxId: string; senderNumber?: string }): Promise<TransactionRecord> {
  const deps = {
    keys: t.runtime.deps.crypto,
    links: { publicBaseUrl: t.config.PUBLIC_BASE_URL, sandboxSecret: t.runtime.deps.secrets.sandboxCallbackSecret },
    logger: t.runtime.deps.logger,
  };
  const started = await startCheckoutTransaction(t.runtime.deps.db, deps, paymentId, {
    gateway: opts.gateway.code,
    gatewayTrxId: opts.gatewayTrxId,
    ...(opts.senderNumber === undefined ? {} : { senderNumber: opts.senderNumber }),
  });
  return getTransactionByTrxId(t.runtime.deps.db, started.trx_id);
}

let seq = 0;

export interface OutgoingSms {
  device_message_id?: string;
  sender: string;
  body: string;
  received_at?: string;
}

/** POST /sms/messages with the device's token; asserts 200 and returns the per-SMS answers. */
export async function forwardSms(t: TestContext, device: PairedDevice, messages: OutgoingSms[]): Promise<Array<{ id: number; match_status: string; trx_id: string | null; duplicate_of: number | null; device_message_id: string }>> {
  const res = await deviceRequest(t, device, 'POST', '/sms/messages', {
    messages: messages.map((m) => ({
      device_message_id: m.device_message_id ?? `sms-${process.pid}-${++seq}-${randomBytes(3).toString('hex')}`,
      sender: m.sender,
      body: m.body,
      received_at: m.received_at ?? new Date().toISOString(),
    })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

export interface SmsRow {
  id: string;
  brand_id: string;
  device_id: string;
  device_message_id: string;
  match_status: string;
  gateway_id: string | null;
  parsed_amount: string | null;
  parsed_trx_id: string | null;
  parsed_sender_number: string | null;
  transaction_id: string | null;
  confidence: string | null;
  candidate_ids: string[] | null;
  reason: string | null;
  reason_code: string | null;
  suggestions: Array<{ transaction_id: number; why: string; distance: number | null }>;
  direction: string | null;
  parsed_balance: string | null;
  parsed_fee: string | null;
  chain_state: string | null;
  chain_previous_id: string | null;
  sms_time: Date | null;
  matched_at: Date | null;
  duplicate_of_id: string | null;
  resolution: string | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  resolution_note: string | null;
  kind: string | null;
}

export async function smsRow(t: TestContext, id: number): Promise<SmsRow> {
  const [row] = await t.sql<SmsRow>('SELECT * FROM sms_records WHERE id = $1', [id]);
  return row!;
}

export async function transactionRow(t: TestContext, id: number): Promise<{ status: string; gateway_trx_id: string | null; completion_source: string | null; completed_at: Date | null }> {
  const [row] = await t.sql<any>('SELECT status, gateway_trx_id, completion_source, completed_at FROM transactions WHERE id = $1', [id]);
  return row;
}

/** `webhook_events` rows of one transaction, oldest first. */
export async function eventsOf(t: TestContext, transactionId: number): Promise<string[]> {
  const rows = await t.sql<{ event: string }>('SELECT event FROM webhook_events WHERE transaction_id = $1 ORDER BY id', [transactionId]);
  return rows.map((r) => r.event);
}
