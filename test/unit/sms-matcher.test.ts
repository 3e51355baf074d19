import { describe, expect, it } from 'vitest';
import {
  AMOUNT_ONLY_CONFIDENCE,
  chooseMatch,
  matchSubmittedTrxId,
  type MatchCandidate,
  type MatchStatus,
  type StoredSmsEvidence,
} from '../../server/domain/sms/matcher.ts';

const SMS_AT = new Date('2024-03-15T08:00:00.000Z');
const WINDOW = 60;
const THRESHOLD = 0.75;
const minutesBefore = (m: number) => new Date(SMS_AT.getTime() - m * 60_000);

function tx(id: number, amount: string, opts: { trx?: string | null; ago?: number; status?: string; at?: Date } = {}): MatchCandidate {
  return {
    id,
    amount,
    gatewayTrxId: opts.trx ?? null,
    createdAt: opts.at ?? minutesBefore(opts.ago ?? 10),
    status: opts.status ?? 'awaiting_verification',
  };
}

const parsed = { amount: '500.00', trxId: 'BFC2XYZ789' };

describe('chooseMatch', () => {
  type Row = [string, MatchCandidate[], { status: MatchStatus; transactionId: number | null; confidence: number; candidateIds: number[] }, (RegExp | undefined)?, number?];
  const rows: Row[] = [
    ['trx id and amount agree: certain', [tx(1, '500.00', { trx: 'BFC2XYZ789' })], { status: 'matched', transactionId: 1, confidence: 1, candidateIds: [1] }],
    ['trx id compared trimmed and case-insensitively', [tx(1, '500.00', { trx: ' bfc2xyz789 ' })], { status: 'matched', transactionId: 1, confidence: 1, candidateIds: [1] }],
    ['amounts compared as decimals', [tx(1, '500', { trx: 'BFC2XYZ789' })], { status: 'matched', transactionId: 1, confidence: 1, candidateIds: [1] }],
    ['certain match wins over amount-only candidates', [tx(1, '500.00'), tx(2, '500.00', { trx: 'BFC2XYZ789' }), tx(3, '500.00')], { status: 'matched', transactionId: 2, confidence: 1, candidateIds: [2] }],
    ['a pending claimer counts too', [tx(1, '500.00', { trx: 'BFC2XYZ789', status: 'pending' })], { status: 'matched', transactionId: 1, confidence: 1, candidateIds: [1] }],
    ['certain claimer is chosen over a conflicting claimer', [tx(1, '900.00', { trx: 'BFC2XYZ789' }), tx(2, '500.00', { trx: 'BFC2XYZ789' })], { status: 'matched', transactionId: 2, confidence: 1, candidateIds: [2, 1] }],
    ['same trx id, other amount: review, never completed', [tx(1, '501.00', { trx: 'BFC2XYZ789' })], { status: 'low_confidence', transactionId: null, confidence: 0, candidateIds: [1] }, /amount 501.00, the SMS says 500.00/],
    ['same trx id, other amount: not handed to an amount-only candidate', [tx(1, '501.00', { trx: 'BFC2XYZ789' }), tx(2, '500.00')], { status: 'low_confidence', transactionId: null, confidence: 0, candidateIds: [1] }],
    ['claimer created after the SMS is not evidence', [tx(1, '500.00', { trx: 'BFC2XYZ789', ago: -1 }), tx(2, '500.00')], { status: 'low_confidence', transactionId: null, confidence: 0, candidateIds: [1] }, /not created within the window/],
    ['claimer older than the window: review', [tx(1, '500.00', { trx: 'BFC2XYZ789', ago: 61 })], { status: 'low_confidence', transactionId: null, confidence: 0, candidateIds: [1] }, /not created within the window/],
    ['trx id already completed a transaction: duplicate', [tx(1, '500.00', { trx: 'BFC2XYZ789', status: 'completed' }), tx(2, '500.00')], { status: 'duplicate', transactionId: null, confidence: 0, candidateIds: [1] }, /already completed transaction 1/],
    ['a completed claimer of any age is a duplicate', [tx(1, '500.00', { trx: 'BFC2XYZ789', status: 'completed', ago: 60 * 24 * 30 })], { status: 'duplicate', transactionId: null, confidence: 0, candidateIds: [1] }],
    ['expired claimer: review', [tx(1, '500.00', { trx: 'BFC2XYZ789', status: 'expired' })], { status: 'low_confidence', transactionId: null, confidence: 0, candidateIds: [1] }, /but is expired/],
    ['two certain claimers: review', [tx(2, '500.00', { trx: 'BFC2XYZ789' }), tx(1, '500.00', { trx: 'BFC2XYZ789' })], { status: 'low_confidence', transactionId: null, confidence: 0, candidateIds: [1, 2] }, /several transactions claim/],
    ['exactly one open transaction with the amount: confident', [tx(1, '500.00'), tx(2, '600.00')], { status: 'matched', transactionId: 1, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [1] }],
    ['a blank gateway trx id is no claim', [tx(1, '500.00', { trx: '  ' })], { status: 'matched', transactionId: 1, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [1] }],
    ['amount-only below the threshold: review', [tx(1, '500.00')], { status: 'low_confidence', transactionId: null, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [1] }, /below the threshold 0.9/, 0.9],
    ['threshold 1: only trx id matches complete', [tx(1, '500.00')], { status: 'low_confidence', transactionId: null, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [1] }, undefined, 1],
    ['threshold 1 still takes a certain match', [tx(1, '500.00', { trx: 'BFC2XYZ789' })], { status: 'matched', transactionId: 1, confidence: 1, candidateIds: [1] }, undefined, 1],
    ['a candidate claiming another trx id is no amount match', [tx(1, '500.00', { trx: 'OTHER12345' })], { status: 'no_candidate', transactionId: null, confidence: 0, candidateIds: [] }],
    ['...so the remaining one is the only fit', [tx(1, '500.00', { trx: 'OTHER12345' }), tx(2, '500.00')], { status: 'matched', transactionId: 2, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [2] }],
    ['two with the amount: low confidence with both ids', [tx(7, '500.00'), tx(3, '500.00', { status: 'pending' })], { status: 'low_confidence', transactionId: null, confidence: 0.4, candidateIds: [3, 7] }, /2 open transactions/],
    ['several stay low confidence even with threshold 0', [tx(1, '500.00'), tx(2, '500.00'), tx(3, '500.00')], { status: 'low_confidence', transactionId: null, confidence: AMOUNT_ONLY_CONFIDENCE / 3, candidateIds: [1, 2, 3] }, undefined, 0],
    ['no transaction with the amount', [tx(1, '500.01'), tx(2, '499.99')], { status: 'no_candidate', transactionId: null, confidence: 0, candidateIds: [] }],
    ['no transactions at all', [], { status: 'no_candidate', transactionId: null, confidence: 0, candidateIds: [] }],
    ['created after the SMS: excluded', [tx(1, '500.00', { at: new Date(SMS_AT.getTime() + 1) })], { status: 'no_candidate', transactionId: null, confidence: 0, candidateIds: [] }],
    ['created at the same instant: included', [tx(1, '500.00', { at: SMS_AT })], { status: 'matched', transactionId: 1, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [1] }],
    ['created exactly at the window start: included', [tx(1, '500.00', { ago: WINDOW })], { status: 'matched', transactionId: 1, confidence: AMOUNT_ONLY_CONFIDENCE, candidateIds: [1] }],
    ['created 1 ms before the window: excluded', [tx(1, '500.00', { at: new Date(minutesBefore(WINDOW).getTime() - 1) })], { status: 'no_candidate', transactionId: null, confidence: 0, candidateIds: [] }],
    ...(['completed', 'failed', 'expired', 'processing'] as const).map(
      (status): Row => [`unclaimed ${status} transaction: not a candidate`, [tx(1, '500.00', { status })], { status: 'no_candidate', transactionId: null, confidence: 0, candidateIds: [] }],
    ),
  ];

  it.each(rows)('%s', (_name, candidates, expected, reason, threshold = THRESHOLD) => {
    const r = chooseMatch({ parsed, smsReceivedAt: SMS_AT, candidates, windowMinutes: WINDOW, threshold });
    expect(r).toMatchObject(expected);
    expect(r.reason).not.toBe('');
    if (reason) expect(r.reason).toMatch(reason);
  });

  it('does not depend on the order of candidates', () => {
    const candidates = [tx(5, '500.00'), tx(2, '500.00'), tx(9, '500.00', { status: 'pending' }), tx(4, '600.00')];
    const a = chooseMatch({ parsed, smsReceivedAt: SMS_AT, candidates, windowMinutes: WINDOW, threshold: THRESHOLD });
    const b = chooseMatch({ parsed, smsReceivedAt: SMS_AT, candidates: [...candidates].reverse(), windowMinutes: WINDOW, threshold: THRESHOLD });
    expect(a).toEqual(b);
  });

  it.each([
    [0, THRESHOLD],
    [-5, THRESHOLD],
    [Number.NaN, THRESHOLD],
    [Number.POSITIVE_INFINITY, THRESHOLD],
    [WINDOW, 1.01],
    [WINDOW, -0.1],
    [WINDOW, Number.NaN],
  ])('rejects window %s / threshold %s', (windowMinutes, threshold) => {
    expect(() => chooseMatch({ parsed, smsReceivedAt: SMS_AT, candidates: [], windowMinutes, threshold })).toThrow(RangeError);
  });
});

describe('matchSubmittedTrxId', () => {
  const submitted = (opts: { amount?: string; trx?: string; ago?: number; status?: string } = {}) =>
    ({ ...tx(1, opts.amount ?? '500.00', { ago: opts.ago ?? 10, status: opts.status }), gatewayTrxId: opts.trx ?? 'BFC2XYZ789' });
  const sms = (id: number, opts: Partial<StoredSmsEvidence> = {}): StoredSmsEvidence => ({
    id,
    amount: '500.00',
    trxId: 'BFC2XYZ789',
    receivedAt: SMS_AT,
    matchStatus: 'no_candidate',
    ...opts,
  });

  type Row = [string, ReturnType<typeof submitted>, StoredSmsEvidence[], { status: MatchStatus; smsId: number | null; confidence: number; smsIds: number[] }, RegExp?];
  const rows: Row[] = [
    ['an unmatched SMS proves it', submitted(), [sms(11)], { status: 'matched', smsId: 11, confidence: 1, smsIds: [11] }],
    ['an SMS left for review proves it too', submitted(), [sms(11, { matchStatus: 'low_confidence' })], { status: 'matched', smsId: 11, confidence: 1, smsIds: [11] }],
    ['trx ids compared trimmed and case-insensitively', submitted({ trx: ' bfc2xyz789' }), [sms(11)], { status: 'matched', smsId: 11, confidence: 1, smsIds: [11] }],
    ['SMS of other trx ids are ignored', submitted(), [sms(11, { trxId: 'OTHER12345' })], { status: 'no_candidate', smsId: null, confidence: 0, smsIds: [] }],
    ['nothing stored yet', submitted(), [], { status: 'no_candidate', smsId: null, confidence: 0, smsIds: [] }],
    ['SMS received before the transaction existed: review', submitted({ ago: -1 }), [sms(11)], { status: 'low_confidence', smsId: null, confidence: 0, smsIds: [11] }, /not received within 60 minutes after/],
    ['SMS received after the window: review', submitted({ ago: 61 }), [sms(11)], { status: 'low_confidence', smsId: null, confidence: 0, smsIds: [11] }],
    ['other amount: review', submitted({ amount: '450.00' }), [sms(11)], { status: 'low_confidence', smsId: null, confidence: 0, smsIds: [11] }, /says amount 500.00/],
    ['trx id already matched by an SMS: duplicate', submitted(), [sms(11, { matchStatus: 'matched' }), sms(12)], { status: 'duplicate', smsId: null, confidence: 0, smsIds: [11] }],
    ['duplicate copies do not count', submitted(), [sms(11, { matchStatus: 'duplicate' })], { status: 'no_candidate', smsId: null, confidence: 0, smsIds: [] }],
    ['two unmatched SMS with the trx id: review', submitted(), [sms(12), sms(11)], { status: 'low_confidence', smsId: null, confidence: 0, smsIds: [11, 12] }],
    ['transaction no longer open', submitted({ status: 'expired' }), [sms(11)], { status: 'no_candidate', smsId: null, confidence: 0, smsIds: [] }],
  ];

  it.each(rows)('%s', (_name, transaction, storedSms, expected, reason) => {
    const r = matchSubmittedTrxId({ transaction, storedSms, windowMinutes: WINDOW, threshold: THRESHOLD });
    expect(r).toMatchObject(expected);
    if (reason) expect(r.reason).toMatch(reason);
  });

  it('validates the settings like chooseMatch', () => {
    expect(() => matchSubmittedTrxId({ transaction: submitted(), storedSms: [], windowMinutes: 0, threshold: THRESHOLD })).toThrow(RangeError);
  });
});

describe('both directions agree on a claimed trx id and its SMS', () => {
  it.each([
    [10, '500.00'],
    [0, '500.00'],
    [WINDOW, '500.00'],
    [WINDOW + 1, '500.00'],
    [-1, '500.00'],
    [10, '500.01'],
  ])('transaction created %s min before the SMS, amount %s', (ago, amount) => {
    const claimer = { ...tx(1, amount, { ago }), gatewayTrxId: parsed.trxId };
    const forward = chooseMatch({ parsed, smsReceivedAt: SMS_AT, candidates: [claimer], windowMinutes: WINDOW, threshold: THRESHOLD });
    const reverse = matchSubmittedTrxId({
      transaction: claimer,
      storedSms: [{ id: 11, ...parsed, receivedAt: SMS_AT, matchStatus: 'no_candidate' }],
      windowMinutes: WINDOW,
      threshold: THRESHOLD,
    });
    expect(reverse.status).toBe(forward.status);
    expect(reverse.confidence).toBe(forward.confidence);
  });
});
