import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chooseMatch,
  matchSubmittedTrxId,
  OPEN_STATUSES,
  type ChainState,
  type MatchCandidate,
  type MatchRules,
  type MatchStatus,
} from '../../server/domain/sms/matching/matcher.ts';
import { comparePayerNumbers } from '../../server/domain/sms/matching/payer-number.ts';

/**
 * A stand-in for the service and its database: it applies the matcher the way the
 * service will, and enforces what the database would (one completion per
 * transaction, per SMS and per gateway trx id) by throwing, so any decision of
 * the matcher that a real database would have to refuse fails the property.
 */

const WINDOW = 60;
const GRACE_SECONDS = 300;
const T0 = Date.UTC(2024, 2, 15, 8, 0, 0);
const at = (minute: number) => new Date(T0 + minute * 60_000);
const key = (trxId: string) => trxId.trim().toUpperCase();

interface Sms {
  messageId: number;
  amount: string;
  trxId: string;
  minute: number;
  senderNumber: string | null;
  chainState: ChainState;
}
interface SmsRecord {
  id: number;
  messageId: number;
  contentHash: string;
  amount: string;
  trxId: string;
  receivedAt: Date;
  senderNumber: string | null;
  chainState: ChainState;
  matchStatus: MatchStatus;
  transactionId: number | null;
}
interface Completion {
  transactionId: number;
  smsId: number;
  trxId: string;
}

class Store {
  readonly txs = new Map<number, MatchCandidate>();
  readonly sms: SmsRecord[] = [];
  readonly completions: Completion[] = [];
  readonly rules: MatchRules;

  constructor(txs: Array<{ amount: string; minute: number; payer: string | null }>, reviewAbove: string | null) {
    this.rules = { windowMinutes: WINDOW, graceSeconds: GRACE_SECONDS, reviewAbove };
    txs.forEach((t, i) => this.txs.set(i + 1, { id: i + 1, amount: t.amount, gatewayTrxId: null, createdAt: at(t.minute), status: 'pending', payerNumber: t.payer }));
  }

  receive(m: Sms): MatchStatus {
    const contentHash = `${m.amount}|${key(m.trxId)}|${m.minute}`;
    const seen = this.sms.some((s) => s.messageId === m.messageId || s.contentHash === contentHash);
    const record: SmsRecord = {
      id: this.sms.length + 1,
      messageId: m.messageId,
      contentHash,
      amount: m.amount,
      trxId: key(m.trxId),
      receivedAt: at(m.minute),
      senderNumber: m.senderNumber,
      chainState: m.chainState,
      matchStatus: 'duplicate',
      transactionId: null,
    };
    this.sms.push(record);
    if (seen) return record.matchStatus;
    const r = chooseMatch({
      sms: { amount: m.amount, trxId: record.trxId, senderNumber: m.senderNumber, time: record.receivedAt, chainState: m.chainState },
      candidates: [...this.txs.values()].map((t) => ({ ...t })),
      rules: this.rules,
    });
    record.matchStatus = r.status;
    if (r.status === 'matched') this.complete(r.transactionId!, record);
    return record.matchStatus;
  }

  submit(txId: number, trxId: string): string {
    const tx = this.txs.get(txId);
    if (!tx || !OPEN_STATUSES.includes(tx.status) || tx.gatewayTrxId !== null) return 'INVALID_STATE';
    if ([...this.txs.values()].some((t) => t.gatewayTrxId !== null && key(t.gatewayTrxId) === key(trxId))) return 'GATEWAY_TRX_ID_TAKEN';
    tx.gatewayTrxId = trxId;
    tx.status = 'awaiting_verification';
    const r = matchSubmittedTrxId({
      transaction: { ...tx, gatewayTrxId: trxId },
      storedSms: this.sms.filter((s) => s.trxId === key(trxId)).map((s) => ({ ...s, time: s.receivedAt })),
      rules: this.rules,
    });
    if (r.status === 'matched') this.complete(tx.id, this.sms.find((s) => s.id === r.smsId)!);
    if (r.status === 'low_confidence' || r.status === 'balance_mismatch') for (const s of this.sms) if (r.smsIds.includes(s.id)) s.matchStatus = r.status;
    return r.status;
  }

  private complete(transactionId: number, record: SmsRecord): void {
    const tx = this.txs.get(transactionId);
    if (!tx || !OPEN_STATUSES.includes(tx.status)) throw new Error(`transaction ${transactionId} completed twice or from ${tx?.status}`);
    if (tx.gatewayTrxId === null || key(tx.gatewayTrxId) !== record.trxId) throw new Error(`transaction ${transactionId} completed by SMS ${record.id} whose id it never claimed`);
    if (record.transactionId !== null || record.matchStatus === 'duplicate') throw new Error(`SMS ${record.id} would complete a second transaction`);
    const holder = [...this.txs.values()].find((t) => t.id !== tx.id && t.gatewayTrxId !== null && key(t.gatewayTrxId) === record.trxId);
    if (holder) throw new Error(`unique violation: trx id ${record.trxId} is held by transaction ${holder.id}`);
    tx.status = 'completed';
    tx.gatewayTrxId = record.trxId;
    record.matchStatus = 'matched';
    record.transactionId = tx.id;
    this.completions.push({ transactionId: tx.id, smsId: record.id, trxId: record.trxId });
  }
}

const amount = fc.constantFrom('100.00', '250.00', '500.00');
const trxId = fc.constantFrom('AB12CD34EF', 'GH56IJ78KL', 'MN90OP12QR', 'ST34UV56WX');
// Payer numbers as SMS print them (full, masked, Rocket's account) and as customers declare them (E.164).
const smsNumber = fc.constantFrom(null, '01712345515', '***515', '01XXXXXX515', '017123455150', '01812345678', '***678', '***516', '*15');
const declaredNumber = fc.constantFrom(null, '+8801712345515', '+8801812345678');
const chainState = fc.constantFrom<ChainState>(null, 'first', 'follows', 'after_break', 'mismatch', 'impossible', 'unreadable');
const smsArb = fc.record({ amount, trxId, minute: fc.integer({ min: 0, max: 100 }), senderNumber: smsNumber, chainState });
// Mostly inside the window before the SMS, sometimes after it or too early.
const txArb = fc.record({ amount, minute: fc.integer({ min: 0, max: 90 }), payer: declaredNumber });

type Event =
  | { kind: 'sms'; index: number }
  | { kind: 'reforward'; index: number }
  | { kind: 'submit'; tx: number; trxId: string };

const scenario = fc
  .record({
    txs: fc.array(txArb, { minLength: 1, maxLength: 6 }),
    smsPool: fc.array(smsArb, { minLength: 1, maxLength: 6 }),
    reviewAbove: fc.constantFrom(null, '100.00', '250.00', '1000.00'),
  })
  .chain((s) =>
    fc.record({
      txs: fc.constant(s.txs),
      smsPool: fc.constant(s.smsPool),
      reviewAbove: fc.constant(s.reviewAbove),
      // Indices into the pool repeat freely: the same SMS forwarded again, late or early.
      events: fc.array(
        fc.oneof(
          fc.record({ kind: fc.constant('sms' as const), index: fc.nat(s.smsPool.length - 1) }),
          fc.record({ kind: fc.constant('reforward' as const), index: fc.nat(s.smsPool.length - 1) }),
          fc.record({
            kind: fc.constant('submit' as const),
            tx: fc.integer({ min: 1, max: s.txs.length }),
            // Customers type ids in any case and with stray spaces.
            trxId: fc.oneof(trxId, trxId.map((t) => ` ${t.toLowerCase()}`), fc.constant('ZZ99ZZ99ZZ')),
          }),
        ) as fc.Arbitrary<Event>,
        { maxLength: 25 },
      ),
    }),
  );

interface Scenario {
  txs: Array<{ amount: string; minute: number; payer: string | null }>;
  smsPool: Array<Omit<Sms, 'messageId'>>;
  reviewAbove: string | null;
  events: Event[];
}

function run(s: Scenario): Store {
  const store = new Store(s.txs, s.reviewAbove);
  let nextMessageId = 1000;
  for (const e of s.events) {
    if (e.kind === 'submit') store.submit(e.tx, e.trxId);
    else store.receive({ ...s.smsPool[e.index]!, messageId: e.kind === 'sms' ? e.index : nextMessageId++ });
  }
  return store;
}

describe('matcher applied by a store, over random transactions and SMS sequences', () => {
  it('never completes a transaction twice, never lets an SMS or a trx id complete two', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const store = run(s);
        const c = store.completions;
        expect(new Set(c.map((x) => x.transactionId)).size).toBe(c.length);
        expect(new Set(c.map((x) => x.smsId)).size).toBe(c.length);
        expect(new Set(c.map((x) => x.trxId)).size).toBe(c.length);
        for (const x of c) {
          const tx = store.txs.get(x.transactionId)!;
          const sms = store.sms.find((r) => r.id === x.smsId)!;
          // No completion is ever contradicted by the SMS's id, amount, timing, payer number, balance or size.
          expect(tx.amount).toBe(sms.amount);
          expect(key(tx.gatewayTrxId!)).toBe(sms.trxId);
          // Spelled out rather than via timingFits, so a bug there cannot hide here.
          const gap = sms.receivedAt.getTime() - tx.createdAt.getTime();
          expect(gap >= -GRACE_SECONDS * 1000 && gap <= WINDOW * 60_000).toBe(true);
          expect(comparePayerNumbers(sms.senderNumber, tx.payerNumber ?? null)).not.toBe('disagree');
          expect(['mismatch', 'impossible', 'unreadable']).not.toContain(sms.chainState);
          if (s.reviewAbove !== null) expect(Number(sms.amount) <= Number(s.reviewAbove)).toBe(true);
        }
        // Never on amount alone: a completed transaction always carried the SMS's id before it completed (checked in complete()).
        const seen = new Set<string>();
        for (const r of store.sms) {
          // The first copy of a message is decided on; every later copy (same device
          // message id, or same content) is a duplicate and never completes anything.
          const copy = seen.has(`id:${r.messageId}`) || seen.has(`hash:${r.contentHash}`);
          if (copy) expect([r.matchStatus, r.transactionId]).toEqual(['duplicate', null]);
          seen.add(`id:${r.messageId}`).add(`hash:${r.contentHash}`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('a transaction and its SMS end the same whichever arrives first', () => {
    fc.assert(
      fc.property(txArb, smsArb, fc.constantFrom(null, '100.00', '1000.00'), (t, m, reviewAbove) => {
        const smsFirst = new Store([t], reviewAbove);
        smsFirst.receive({ ...m, messageId: 1 });
        smsFirst.submit(1, m.trxId);
        const submitFirst = new Store([t], reviewAbove);
        submitFirst.submit(1, m.trxId);
        submitFirst.receive({ ...m, messageId: 1 });
        expect(submitFirst.txs.get(1)!.status).toBe(smsFirst.txs.get(1)!.status);
        expect(submitFirst.sms[0]!.matchStatus).toBe(smsFirst.sms[0]!.matchStatus);
      }),
      { numRuns: 1000 },
    );
  });
});
