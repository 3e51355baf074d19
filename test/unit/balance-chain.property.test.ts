import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { breaksChain, chainState, expectedAfter, linkTrusted, type ChainReading } from '../../server/domain/sms/matching/balance-chain.ts';
import { CERTAIN_CONFIDENCE, chooseMatch } from '../../server/domain/sms/matching/matcher.ts';

/**
 * The balance chain's trust, as properties over generated sequences of one
 * phone's wallet SMS (docs/matching.md, "Balance chain"): each SMS is checked
 * against the last link before it, as the service does in chain order.
 */

type Step = { direction: 'in' | 'out'; cents: number; balance: 'genuine' | 'forged' | 'none' };
const step = fc.record({
  direction: fc.constantFrom<'in' | 'out'>('in', 'out'),
  cents: fc.integer({ min: 100, max: 500_000 }),
  balance: fc.constantFrom<Step['balance']>('genuine', 'genuine', 'forged', 'none'),
});
const money = (cents: number) => (cents / 100).toFixed(2);

/** Plays the steps on a wallet starting at `start` cents; returns each SMS's state and whether it was forged. */
function play(start: number, steps: Step[]) {
  let wallet = start;
  let link: { balance: string; trusted: boolean } | null = null;
  return steps.map((s) => {
    // A forgery moves no money; a genuine SMS does (and a debit never takes the wallet below zero here).
    const genuine = s.balance !== 'forged';
    if (genuine) wallet += s.direction === 'in' ? s.cents : -Math.min(s.cents, wallet);
    const amount = money(s.direction === 'in' || !genuine ? s.cents : Math.min(s.cents, wallet + s.cents));
    const reading: ChainReading = {
      direction: s.direction,
      amount,
      fee: null,
      balance: s.balance === 'none' ? null : s.balance === 'forged' ? money(wallet + 1 + s.cents) : money(wallet),
      balanceUnreadable: false,
    };
    const verdict = chainState(reading, link);
    if (verdict.balance !== null) link = { balance: verdict.balance, trusted: linkTrusted(verdict.state, null) };
    return { state: verdict.state, forged: !genuine, reading };
  });
}

describe('balance chain: properties', () => {
  it('once a link breaks, no later SMS is trusted (without a repair or an operator)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.array(step, { minLength: 1, maxLength: 12 }), (start, steps) => {
        const states = play(start, steps).map((r) => r.state);
        // `missing` is no link (a credit without a balance counts nothing): it leaves the chain as it was.
        const firstBreak = states.findIndex((s) => breaksChain(s) && s !== 'missing');
        if (firstBreak < 0) return;
        for (const s of states.slice(firstBreak + 1)) expect(['first', 'follows', 'repaired']).not.toContain(s);
      }),
      { numRuns: 500 },
    );
  });

  it('no forged credit after the first link ever completes a payment that claims it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), fc.array(step, { minLength: 2, maxLength: 12 }), (start, steps) => {
        const played = play(start, steps);
        for (const [i, r] of played.entries()) {
          // The chain's first link cannot be checked (nothing before it): SECURITY.md.
          if (!r.forged || r.reading.direction !== 'in' || i === 0 || played.slice(0, i).every((p) => p.state === null)) continue;
          const result = chooseMatch({
            sms: { amount: r.reading.amount, trxId: 'FORGED0001', senderNumber: null, time: new Date(), chainState: r.state },
            candidates: [{ id: 1, amount: r.reading.amount, gatewayTrxId: 'FORGED0001', createdAt: new Date(Date.now() - 60_000), status: 'awaiting_verification' }],
            rules: { windowMinutes: 60, graceSeconds: 300, reviewAbove: null },
          });
          expect(result.confidence).not.toBe(CERTAIN_CONFIDENCE);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('genuine SMS with balances, however many debits without one between them, all follow', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 1_000_000 }), fc.array(fc.record({ direction: fc.constantFrom<'in' | 'out'>('in', 'out'), cents: fc.integer({ min: 100, max: 5_000 }), stated: fc.boolean() }), { minLength: 1, maxLength: 12 }), (start, raw) => {
        // Credits always state their balance; debits may not (bill pay).
        const steps: Step[] = raw.map((r) => ({ direction: r.direction, cents: r.cents, balance: r.direction === 'in' || r.stated ? 'genuine' : 'none' }));
        const states = play(start, [{ direction: 'in', cents: 100, balance: 'genuine' }, ...steps]).map((r) => r.state);
        expect(states[0]).toBe('first');
        for (const s of states.slice(1)) expect(s).toBe('follows');
      }),
      { numRuns: 300 },
    );
  });

  it('expectedAfter is exact: in then out of the same amount and fee returns to the start', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 12 }), fc.integer({ min: 1, max: 10 ** 9 }), fc.integer({ min: 0, max: 10 ** 6 }), (start, amount, fee) => {
        const after = expectedAfter(expectedAfter(money(start), { direction: 'in', amount: money(amount), fee: money(fee) }), { direction: 'out', amount: money(amount), fee: money(-fee) });
        expect(after).toBe(money(start));
      }),
    );
  });
});
