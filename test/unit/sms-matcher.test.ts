import { describe, expect, it } from 'vitest';
import {
  chooseMatch,
  matchSubmittedTrxId,
  type ChainState,
  type MatchCandidate,
  type MatchRules,
  type MatchStatus,
  type ReasonCode,
  type SmsEvidence,
  type StoredSmsEvidence,
} from '../../server/domain/sms/matching/matcher.ts';

const SMS_AT = new Date('2024-03-15T08:00:00.000Z');
const WINDOW = 60;
const RULES: MatchRules = { windowMinutes: WINDOW, graceSeconds: 300, reviewAbove: null };
const minutesBefore = (m: number) => new Date(SMS_AT.getTime() - m * 60_000);

function tx(id: number, amount: string, opts: { trx?: string | null; ago?: number; status?: string; at?: Date; payer?: string | null } = {}): MatchCandidate {
  return {
    id,
    amount,
    gatewayTrxId: opts.trx ?? null,
    createdAt: opts.at ?? minutesBefore(opts.ago ?? 10),
    status: opts.status ?? 'awaiting_verification',
    payerNumber: opts.payer ?? null,
  };
}

const ID = 'BFC2XYZ789';
const sms = (over: Partial<SmsEvidence> = {}): SmsEvidence => ({ amount: '500.00', trxId: ID, senderNumber: null, time: SMS_AT, chainState: null, ...over });

interface Expect {
  status: MatchStatus;
  transactionId?: number | null;
  code: ReasonCode;
  candidateIds?: number[];
}
type Row = [string, MatchCandidate[], Expect, { sms?: Partial<SmsEvidence>; rules?: Partial<MatchRules>; reason?: RegExp }?];

function check(candidates: MatchCandidate[], expected: Expect, opts: Row[3] = {}) {
  const r = chooseMatch({ sms: sms(opts.sms), candidates, rules: { ...RULES, ...opts.rules } });
  expect(r.status).toBe(expected.status);
  expect(r.reasonCode).toBe(expected.code);
  if (expected.transactionId !== undefined) expect(r.transactionId).toBe(expected.transactionId);
  if (expected.candidateIds) expect(r.candidateIds).toEqual(expected.candidateIds);
  expect(r.confidence).toBe(r.status === 'matched' ? 1 : 0);
  if (r.status !== 'matched') expect(r.transactionId).toBeNull();
  expect(r.reason).not.toBe('');
  if (opts.reason) expect(r.reason).toMatch(opts.reason);
  return r;
}

describe('rule 1: only certain evidence completes', () => {
  const rows: Row[] = [
    ['trx id and amount agree, timing fits: certain', [tx(1, '500.00', { trx: ID })], { status: 'matched', transactionId: 1, code: 'certain_match' }],
    ['trx id compared trimmed and case-insensitively', [tx(1, '500.00', { trx: ' bfc2xyz789 ' })], { status: 'matched', transactionId: 1, code: 'certain_match' }],
    ['amounts compared as decimals', [tx(1, '500', { trx: ID })], { status: 'matched', transactionId: 1, code: 'certain_match' }],
    ['a pending claimer counts too', [tx(1, '500.00', { trx: ID, status: 'pending' })], { status: 'matched', transactionId: 1, code: 'certain_match' }],
    ['the certain claimer wins over same-amount payments without the id', [tx(1, '500.00'), tx(2, '500.00', { trx: ID }), tx(3, '500.00')], { status: 'matched', transactionId: 2, code: 'certain_match', candidateIds: [2] }],
    ['exactly one open payment with the amount and no claim: review, never amount alone', [tx(1, '500.00'), tx(2, '600.00')], { status: 'low_confidence', code: 'trx_id_unclaimed', candidateIds: [1] }],
    ['a blank claimed id is no claim', [tx(1, '500.00', { trx: '  ' })], { status: 'low_confidence', code: 'trx_id_unclaimed', candidateIds: [1] }],
    ['same id, other amount: review', [tx(1, '501.00', { trx: ID })], { status: 'low_confidence', code: 'amount_mismatch', candidateIds: [1] }, { reason: /amount 501.00, the SMS says 500.00/ }],
    ['same id, other amount: not handed to a same-amount payment', [tx(1, '501.00', { trx: ID }), tx(2, '500.00')], { status: 'low_confidence', code: 'amount_mismatch', candidateIds: [1] }],
    ['two claimers, even one certain: review', [tx(1, '900.00', { trx: ID }), tx(2, '500.00', { trx: ID })], { status: 'low_confidence', code: 'several_claims', candidateIds: [1, 2] }],
    ['two certain claimers: review', [tx(2, '500.00', { trx: ID }), tx(1, '500.00', { trx: ID })], { status: 'low_confidence', code: 'several_claims', candidateIds: [1, 2] }],
    ['id already completed a payment: duplicate', [tx(1, '500.00', { trx: ID, status: 'completed' }), tx(2, '500.00')], { status: 'duplicate', code: 'duplicate_trx_id', candidateIds: [1] }],
    ['a completed claimer of any age is a duplicate', [tx(1, '500.00', { trx: ID, status: 'completed', ago: 60 * 24 * 30 })], { status: 'duplicate', code: 'duplicate_trx_id' }],
    ['expired claimer: review', [tx(1, '500.00', { trx: ID, status: 'expired' })], { status: 'low_confidence', code: 'claim_not_open' }, { reason: /is expired/ }],
    ['nothing with the id or the amount: no_candidate', [tx(1, '500.01'), tx(2, '499.99')], { status: 'no_candidate', code: 'no_candidate', candidateIds: [] }],
    ['no transactions at all', [], { status: 'no_candidate', code: 'no_candidate', candidateIds: [] }],
    ...(['completed', 'failed', 'expired', 'processing'] as const).map(
      (status): Row => [`unclaimed ${status} transaction: not a suggestion`, [tx(1, '500.00', { status })], { status: 'no_candidate', code: 'no_candidate', candidateIds: [] }],
    ),
  ];
  it.each(rows)('%s', (_name, candidates, expected, opts) => void check(candidates, expected, opts));

  it('does not depend on the order of candidates', () => {
    const candidates = [tx(5, '500.00', { trx: 'BFC2XYZ78O' }), tx(2, '500.00'), tx(9, '500.00', { status: 'pending', trx: 'ZZZZZZZZZZ' }), tx(4, '600.00')];
    const a = chooseMatch({ sms: sms(), candidates, rules: RULES });
    const b = chooseMatch({ sms: sms(), candidates: [...candidates].reverse(), rules: RULES });
    expect(a).toEqual(b);
  });

  it.each([
    [{ windowMinutes: 0 }],
    [{ windowMinutes: -5 }],
    [{ windowMinutes: Number.NaN }],
    [{ windowMinutes: Number.POSITIVE_INFINITY }],
    [{ graceSeconds: -1 }],
    [{ graceSeconds: Number.NaN }],
  ])('rejects rules %o', (bad) => {
    expect(() => chooseMatch({ sms: sms(), candidates: [], rules: { ...RULES, ...bad } })).toThrow(RangeError);
  });
});

describe('timing, with the clock grace', () => {
  const rows: Row[] = [
    ['payment created at the SMS instant', [tx(1, '500.00', { trx: ID, at: SMS_AT })], { status: 'matched', code: 'certain_match' }],
    ['exactly at the window start', [tx(1, '500.00', { trx: ID, ago: WINDOW })], { status: 'matched', code: 'certain_match' }],
    ['1 ms before the window: review', [tx(1, '500.00', { trx: ID, at: new Date(minutesBefore(WINDOW).getTime() - 1) })], { status: 'low_confidence', code: 'outside_window' }],
    ['SMS 3 minutes older than the payment (a slow phone): within the grace', [tx(1, '500.00', { trx: ID, ago: -3 })], { status: 'matched', code: 'certain_match' }],
    ['SMS exactly the grace older: still fits', [tx(1, '500.00', { trx: ID, at: new Date(SMS_AT.getTime() + 300_000) })], { status: 'matched', code: 'certain_match' }],
    ['SMS older than the payment by more than the grace: review (a replayed old SMS)', [tx(1, '500.00', { trx: ID, at: new Date(SMS_AT.getTime() + 300_001) })], { status: 'low_confidence', code: 'outside_window' }],
    ['grace 0: a slow phone\'s SMS 3 minutes early is review', [tx(1, '500.00', { trx: ID, ago: -3 })], { status: 'low_confidence', code: 'outside_window' }, { rules: { graceSeconds: 0 } }],
  ];
  it.each(rows)('%s', (_name, candidates, expected, opts) => void check(candidates, expected, opts));
});

describe('rule 2: sender number agreement', () => {
  const declared = '+8801712345515';
  const claim = (payer: string | null) => [tx(1, '500.00', { trx: ID, payer })];
  const rows: Array<[string, string | null, string | null, MatchStatus, ReasonCode]> = [
    ['same number, local form', '01712345515', declared, 'matched', 'certain_match'],
    ['same number, 880 form', '8801712345515', declared, 'matched', 'certain_match'],
    ['same number, +880 with dashes', '+880-1712-345515', declared, 'matched', 'certain_match'],
    ['masked ***515 agrees by its visible digits', '***515', declared, 'matched', 'certain_match'],
    ['masked 01XXXXXX515 agrees', '01XXXXXX515', declared, 'matched', 'certain_match'],
    ['Rocket 12-digit account of the number agrees', '017123455150', declared, 'matched', 'certain_match'],
    ['another number: review', '01812345678', declared, 'low_confidence', 'sender_number_mismatch'],
    ['masked, other last digits: review', '***516', declared, 'low_confidence', 'sender_number_mismatch'],
    ['masked, other operator prefix: review', '01XXXXXX515'.replace('01', '013'), declared, 'low_confidence', 'sender_number_mismatch'],
    ['masked down to two digits says nothing', '*****15', declared, 'matched', 'certain_match'],
    ['no number declared: nothing to contradict', '01812345678', null, 'matched', 'certain_match'],
    ['SMS names no number: nothing to contradict', null, declared, 'matched', 'certain_match'],
    ['unreadable SMS number: nothing to contradict', 'abc', declared, 'matched', 'certain_match'],
  ];
  it.each(rows)('%s', (_name, smsNumber, payer, status, code) => void check(claim(payer), { status, code }, { sms: { senderNumber: smsNumber } }));

  it('the first customer to claim an id does not win another payer\'s money', () => {
    // Payer A's SMS names A's number; customer B typed A's id with B's own number.
    const r = check([tx(1, '500.00', { trx: ID, payer: '+8801912000111' })], { status: 'low_confidence', code: 'sender_number_mismatch' }, { sms: { senderNumber: '01712345515' } });
    expect(r.suggestions[0]).toMatchObject({ transactionId: 1 });
  });
});

describe('rule 3: the balance chain', () => {
  const rows: Array<[ChainState, MatchStatus, ReasonCode]> = [
    [null, 'matched', 'certain_match'],
    ['first', 'matched', 'certain_match'],
    ['follows', 'matched', 'certain_match'],
    ['repaired', 'matched', 'certain_match'],
    ['after_break', 'balance_mismatch', 'balance_after_break'],
    ['missing', 'balance_mismatch', 'balance_missing'],
    ['mismatch', 'balance_mismatch', 'balance_mismatch'],
    ['impossible', 'balance_mismatch', 'balance_impossible'],
    ['unreadable', 'balance_mismatch', 'balance_unreadable'],
  ];
  it.each(rows)('chain state %s on a certain claim: %s', (chainState, status, code) =>
    void check([tx(1, '500.00', { trx: ID })], { status, code }, { sms: { chainState } }));
  it('a chain contradiction with nobody claiming the id is still balance_mismatch, with suggestions', () => {
    const r = check([tx(1, '500.00')], { status: 'balance_mismatch', code: 'balance_mismatch', candidateIds: [1] }, { sms: { chainState: 'mismatch' } });
    expect(r.suggestions).toHaveLength(1);
  });
});

describe('rule 5: typo suggestions', () => {
  it('ranks open same-amount payments by how close their claimed id is', () => {
    const candidates = [
      tx(1, '500.00', { trx: 'ZZZZZZZZZZ' }), // far
      tx(2, '500.00'), // no claim
      tx(3, '500.00', { trx: 'BFC2XYZ7B9' }), // 1 plain substitution (8 -> B is confusable: 0.5)
      tx(4, '500.00', { trx: 'BFC2XYZ780' }), // 1 plain substitution (9 -> 0)
      tx(5, '500.00', { trx: 'BFC2XZY789' }), // swap of two neighbours
      tx(6, '500.00', { trx: 'BFC2XYZ7' }), // two deletions
      tx(7, '600.00', { trx: 'BFC2XYZ78' }), // other amount: not a suggestion
    ];
    const r = check(candidates, { status: 'low_confidence', code: 'trx_id_unclaimed' });
    expect(r.suggestions.map((s) => s.transactionId)).toEqual([3, 4, 5, 6, 2, 1]);
    expect(r.suggestions.map((s) => s.distance)).toEqual([0.5, 1, 1, 2, null, expect.any(Number)]);
    expect(r.candidateIds).toEqual([3, 4, 5, 6, 2, 1]);
  });
  it.each([
    ['O for 0', 'B0C2XYZ789', 'BOC2XYZ789'],
    ['B for 8', 'BFC2XYZ789', 'BFC2XYZ7B9'],
    ['I for 1', 'A1B2C3D4E5', 'AIB2C3D4E5'],
    ['S for 5', 'A5B2C3D4E5', 'ASB2C3D4E5'],
  ])('%s counts closer than another character', (_n, smsId, typed) => {
    const r = chooseMatch({ sms: sms({ trxId: smsId }), candidates: [tx(1, '500.00', { trx: typed }), tx(2, '500.00', { trx: `${smsId.slice(0, 9)}Q` })], rules: RULES });
    expect(r.suggestions.map((s) => [s.transactionId, s.distance])).toEqual([
      [1, 0.5],
      [2, 1],
    ]);
  });
  it('never completes, even when the only suggestion is one character away', () => {
    check([tx(1, '500.00', { trx: 'BFC2XYZ78O' })], { status: 'low_confidence', code: 'trx_id_unclaimed', candidateIds: [1] });
  });
});

describe('rule 6: large amounts', () => {
  it.each([
    ['500.00', '499.99', 'low_confidence', 'above_review_threshold'],
    ['500.00', '500.00', 'matched', 'certain_match'],
    ['500.00', null, 'matched', 'certain_match'],
  ] as const)('amount %s, review above %s: %s', (amount, reviewAbove, status, code) =>
    void check([tx(1, amount, { trx: ID })], { status, code }, { sms: { amount }, rules: { reviewAbove } }));
});

describe('matchSubmittedTrxId (a stored SMS, then the customer submits the id)', () => {
  const submitted = (opts: { amount?: string; trx?: string; ago?: number; status?: string; payer?: string | null } = {}) =>
    ({ ...tx(1, opts.amount ?? '500.00', { ago: opts.ago ?? 10, status: opts.status, payer: opts.payer }), gatewayTrxId: opts.trx ?? ID });
  const stored = (id: number, opts: Partial<StoredSmsEvidence> = {}): StoredSmsEvidence => ({ id, ...sms(), matchStatus: 'no_candidate', ...opts });

  type RRow = [string, ReturnType<typeof submitted>, StoredSmsEvidence[], { status: MatchStatus; smsId: number | null; smsIds: number[]; code: ReasonCode }];
  const rows: RRow[] = [
    ['an unmatched SMS proves it', submitted(), [stored(11)], { status: 'matched', smsId: 11, smsIds: [11], code: 'certain_match' }],
    ['an SMS left for review (unclaimed id) proves it too', submitted(), [stored(11, { matchStatus: 'low_confidence' })], { status: 'matched', smsId: 11, smsIds: [11], code: 'certain_match' }],
    ['trx ids compared trimmed and case-insensitively', submitted({ trx: ' bfc2xyz789' }), [stored(11)], { status: 'matched', smsId: 11, smsIds: [11], code: 'certain_match' }],
    ['SMS of other ids are ignored', submitted(), [stored(11, { trxId: 'OTHER12345' })], { status: 'no_candidate', smsId: null, smsIds: [], code: 'no_candidate' }],
    ['nothing stored yet', submitted(), [], { status: 'no_candidate', smsId: null, smsIds: [], code: 'no_candidate' }],
    ['SMS long before the payment: review', submitted({ ago: -10 }), [stored(11)], { status: 'low_confidence', smsId: null, smsIds: [11], code: 'outside_window' }],
    ['SMS after the window: review', submitted({ ago: 61 }), [stored(11)], { status: 'low_confidence', smsId: null, smsIds: [11], code: 'outside_window' }],
    ['other amount: review', submitted({ amount: '450.00' }), [stored(11)], { status: 'low_confidence', smsId: null, smsIds: [11], code: 'amount_mismatch' }],
    ['other payer number: review', submitted({ payer: '+8801912000111' }), [stored(11, { senderNumber: '01712345515' })], { status: 'low_confidence', smsId: null, smsIds: [11], code: 'sender_number_mismatch' }],
    ['a balance_mismatch SMS is not waiting for a claim', submitted(), [stored(11, { matchStatus: 'balance_mismatch', chainState: 'mismatch' })], { status: 'no_candidate', smsId: null, smsIds: [], code: 'no_candidate' }],
    ['an unmatched SMS with a broken chain: balance_mismatch', submitted(), [stored(11, { chainState: 'impossible' })], { status: 'balance_mismatch', smsId: null, smsIds: [11], code: 'balance_impossible' }],
    ['id already matched by an SMS: duplicate', submitted(), [stored(11, { matchStatus: 'matched' }), stored(12)], { status: 'duplicate', smsId: null, smsIds: [11], code: 'duplicate_trx_id' }],
    ['duplicate copies do not count', submitted(), [stored(11, { matchStatus: 'duplicate' })], { status: 'no_candidate', smsId: null, smsIds: [], code: 'no_candidate' }],
    ['two unmatched SMS with the id: review', submitted(), [stored(12), stored(11)], { status: 'low_confidence', smsId: null, smsIds: [11, 12], code: 'several_claims' }],
    ['transaction no longer open', submitted({ status: 'expired' }), [stored(11)], { status: 'no_candidate', smsId: null, smsIds: [], code: 'claim_not_open' }],
  ];
  it.each(rows)('%s', (_name, transaction, storedSms, expected) => {
    const r = matchSubmittedTrxId({ transaction, storedSms, rules: RULES });
    expect({ status: r.status, smsId: r.smsId, smsIds: r.smsIds, code: r.reasonCode }).toEqual(expected);
  });
  it('review threshold applies in this direction too', () => {
    const r = matchSubmittedTrxId({ transaction: submitted(), storedSms: [stored(11)], rules: { ...RULES, reviewAbove: '100.00' } });
    expect([r.status, r.reasonCode]).toEqual(['low_confidence', 'above_review_threshold']);
  });
});

describe('both directions agree on a claimed id and its SMS', () => {
  it.each([
    [10, '500.00', null, null],
    [0, '500.00', null, null],
    [WINDOW, '500.00', null, null],
    [WINDOW + 1, '500.00', null, null],
    [-3, '500.00', null, null],
    [-6, '500.00', null, null],
    [10, '500.01', null, null],
    [10, '500.00', '***999', null],
    [10, '500.00', '***999', 'mismatch'],
  ] as const)('payment created %s min before the SMS, amount %s, SMS number %s, chain %s', (ago, amount, smsNumber, chainState) => {
    const claimer = { ...tx(1, amount, { ago, payer: '+8801712345515' }), gatewayTrxId: ID };
    const evidence = sms({ senderNumber: smsNumber, chainState });
    const forward = chooseMatch({ sms: evidence, candidates: [claimer], rules: RULES });
    const reverse = matchSubmittedTrxId({ transaction: claimer, storedSms: [{ id: 11, ...evidence, matchStatus: 'no_candidate' }], rules: RULES });
    expect(reverse.status).toBe(forward.status);
    expect(reverse.reasonCode).toBe(forward.reasonCode);
  });
});
