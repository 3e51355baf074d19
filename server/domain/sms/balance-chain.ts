import type { EntityManager } from '../../infra/database/orm.ts';
import { addMoney, compareMoney, subMoney } from '../money/decimal.ts';
import { sql } from 'kysely';
import { db } from '../db.ts';
import type { ChainState } from './matcher.ts';
import { normalizeSender } from './parser.ts';
import { senderKey } from './senders.ts';

/**
 * The balance chain (docs/matching.md, "Balance chain"): per device and
 * wallet, every transaction SMS of an official sender reports the balance
 * after it, so each one must follow from the one before it by SMS time:
 * previous + amount - fee for money in, previous - amount - fee for money out.
 * A forged "received Tk 20,000 ... Balance Tk 1.00" cannot follow, whatever
 * the trx id it names.
 */

export interface ChainReading {
  direction: 'in' | 'out';
  amount: string;
  fee: string | null;
  balance: string | null;
  balanceUnreadable: boolean;
}

export interface ChainVerdict {
  state: ChainState;
  previousId: number | null;
  /** What the balance should have been after the previous message, when it is known. */
  expected: string | null;
}

const BROKEN: ReadonlySet<string> = new Set(['mismatch', 'impossible', 'unreadable']);

/** One chain per wallet as the phone names its sender (`bKash` and `BKASH` are one wallet, senders.ts). */
export function walletKey(sender: string): string {
  return (senderKey(sender) ?? normalizeSender(sender)).slice(0, 64);
}

/** The balance after `r` if the balance before it was `previous`. */
export function expectedAfter(previous: string, r: Pick<ChainReading, 'direction' | 'amount' | 'fee'>): string {
  const fee = r.fee ?? '0';
  return r.direction === 'in' ? subMoney(addMoney(previous, r.amount), fee) : subMoney(subMoney(previous, r.amount), fee);
}

/**
 * Pure: the chain state of a reading given the previous link (null when none).
 * `impossible`: a credit whose balance is below what it alone brought in (the
 * wallet would have been negative before it), known without any previous link.
 */
export function chainState(
  r: ChainReading,
  previous: { balance: string; state: ChainState } | null,
  next: (Pick<ChainReading, 'direction' | 'amount' | 'fee'> & { balance: string }) | null = null,
): { state: ChainState; expected: string | null } {
  if (r.balanceUnreadable) return { state: 'unreadable', expected: null };
  if (r.balance === null) return { state: null, expected: null };
  if (compareMoney(r.balance, '0') < 0) return { state: 'impossible', expected: null };
  if (r.direction === 'in' && compareMoney(r.balance, subMoney(r.amount, r.fee ?? '0')) < 0) return { state: 'impossible', expected: null };
  // A later SMS decided before this one (out-of-order delivery) must follow from it too, or the chain forked here.
  if (next !== null && compareMoney(expectedAfter(r.balance, next), next.balance) !== 0) {
    return { state: 'mismatch', expected: previous === null ? null : expectedAfter(previous.balance, r) };
  }
  if (previous === null) return { state: 'first', expected: null };
  const expected = expectedAfter(previous.balance, r);
  if (compareMoney(expected, r.balance) === 0) {
    // Following a message that itself broke the chain proves little: it is recorded as such, not as a clean link.
    return { state: previous.state !== null && BROKEN.has(previous.state) ? 'after_break' : 'follows', expected };
  }
  return { state: 'mismatch', expected };
}

/**
 * Locks the chain of (device, wallet) for the rest of the transaction, finds
 * the previous link by SMS time (and the next one, when a later SMS was
 * decided first), decides the reading's state and moves the chain's head when
 * this SMS is the newest. Concurrent batches of one phone
 * thus check their balances one after the other.
 */
export async function checkBalanceChain(
  tx: EntityManager,
  q: { deviceId: number; wallet: string; recordId: number; smsTime: Date; reading: ChainReading },
): Promise<ChainVerdict> {
  if (q.reading.balance === null && !q.reading.balanceUnreadable) return { state: null, previousId: null, expected: null };
  const k = db(tx);
  await k.insertInto('sms_balance_chains').values({ device_id: q.deviceId, wallet_key: q.wallet }).onConflict((oc) => oc.doNothing()).execute();
  const head = await k
    .selectFrom('sms_balance_chains')
    .select('last_sms_time')
    .where('device_id', '=', q.deviceId)
    .where('wallet_key', '=', q.wallet)
    .forUpdate()
    .executeTakeFirst();
  // The links either side by (sms_time, id), along sms_records_chain_idx.
  const link = () =>
    k
      .selectFrom('sms_records')
      .where('device_id', '=', q.deviceId)
      .where('wallet_key', '=', q.wallet)
      .where('parsed_balance', 'is not', null)
      .where('id', '<>', q.recordId);
  const prev = await link()
    .select(['id', 'parsed_balance', 'chain_state'])
    .where((eb) => eb.or([eb('sms_time', '<', q.smsTime), eb.and([eb('sms_time', '=', q.smsTime), eb('id', '<', q.recordId)])]))
    .orderBy('sms_time', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const next = await link()
    .select(['parsed_balance', 'parsed_amount', 'parsed_fee', 'direction'])
    .where((eb) => eb.or([eb('sms_time', '>', q.smsTime), eb.and([eb('sms_time', '=', q.smsTime), eb('id', '>', q.recordId)])]))
    .orderBy('sms_time')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  // Selected with a balance: parsed_balance is set; a record with a balance has its amount and direction too.
  const verdict = chainState(
    q.reading,
    prev ? { balance: prev.parsed_balance!, state: prev.chain_state } : null,
    next ? { balance: next.parsed_balance!, amount: next.parsed_amount!, fee: next.parsed_fee, direction: next.direction! } : null,
  );
  const newest = !head?.last_sms_time || head.last_sms_time.getTime() <= q.smsTime.getTime();
  if (newest && q.reading.balance !== null) {
    await k
      .updateTable('sms_balance_chains')
      .set({ last_record_id: q.recordId, last_balance: q.reading.balance, last_sms_time: q.smsTime, broken: verdict.state !== null && BROKEN.has(verdict.state), updated_at: sql<Date>`now()` })
      .where('device_id', '=', q.deviceId)
      .where('wallet_key', '=', q.wallet)
      .execute();
  }
  return { state: verdict.state, previousId: prev ? prev.id : null, expected: verdict.expected };
}
