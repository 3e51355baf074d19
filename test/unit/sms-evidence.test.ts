import { describe, expect, it } from 'vitest';
import { chainState, expectedAfter, type ChainReading } from '../../server/domain/sms/matching/balance-chain.ts';
import { comparePayerNumbers, MIN_VISIBLE_DIGITS } from '../../server/domain/sms/matching/payer-number.ts';
import { idDistance } from '../../server/domain/sms/matching/typo.ts';
import { parseSms } from '../../server/domain/sms/templates/parser.ts';

const credit = (amount: string, balance: string | null, fee: string | null = null): ChainReading => ({ direction: 'in', amount, fee, balance, balanceUnreadable: false });
const debit = (amount: string, balance: string | null, fee: string | null = null): ChainReading => ({ direction: 'out', amount, fee, balance, balanceUnreadable: false });

describe('balance chain (pure)', () => {
  it.each([
    ['credit follows: previous + amount', credit('500.00', '1500.00'), { balance: '1000.00', trusted: true }, 'follows', '1500.00'],
    ['credit with fee follows: previous + amount - fee', credit('500.00', '1490.00', '10.00'), { balance: '1000.00', trusted: true }, 'follows', '1490.00'],
    ['debit follows: previous - amount - fee', debit('200.00', '795.00', '5.00'), { balance: '1000.00', trusted: true }, 'follows', '795.00'],
    ['credit one paisa off: mismatch', credit('500.00', '1500.01'), { balance: '1000.00', trusted: true }, 'mismatch', '1500.00'],
    ['a credit after a missed one: mismatch', credit('500.00', '2500.00'), { balance: '1000.00', trusted: true }, 'mismatch', '1500.00'],
    ['following an untrusted link: after_break', credit('500.00', '1500.00'), { balance: '1000.00', trusted: false }, 'after_break', '1500.00'],
    ['a debit following an untrusted link: after_break too (it does not reset the chain)', debit('100.00', '900.00'), { balance: '1000.00', trusted: false }, 'after_break', '900.00'],
    ['no previous: first', credit('500.00', '1500.00'), null, 'first', null],
    ['forged "received 20,000, balance 1.00": impossible even without a previous', credit('20000.00', '1.00'), null, 'impossible', null],
    ['forged, with a previous: impossible', credit('20000.00', '1.00'), { balance: '1000.00', trusted: true }, 'impossible', null],
    ['a credit without a balance on a chain with balances: missing', credit('500.00', null), { balance: '1000.00', trusted: true }, 'missing', null],
    ['a credit without a balance on a chain without any: no chain', credit('500.00', null), null, null, null],
    ['a debit without a balance (bill pay): a link derived from the previous', debit('485.00', null, '0.00'), { balance: '1000.00', trusted: true }, 'follows', '515.00'],
    ['...after a break, untrusted like any other', debit('485.00', null), { balance: '1000.00', trusted: false }, 'after_break', '515.00'],
    ['...larger than the previous balance: money the chain never saw, a mismatch', debit('1485.00', null), { balance: '1000.00', trusted: true }, 'mismatch', '-485.00'],
    ['...with no previous link: nothing to derive', debit('485.00', null), null, null, null],
  ])('%s', (_n, reading, previous, state, expected) => {
    expect(chainState(reading, previous)).toMatchObject({ state, expected });
  });
  it("a derived debit's balance is what the next SMS is checked against", () => {
    const billPay = chainState(debit('485.00', null), { balance: '1000.00', trusted: true });
    expect(billPay.balance).toBe('515.00');
    expect(chainState(credit('500.00', '1015.00'), { balance: billPay.balance!, trusted: true }).state).toBe('follows');
  });
  it('an unreadable balance is its own state', () => {
    expect(chainState({ ...credit('500.00', null), balanceUnreadable: true }, null).state).toBe('unreadable');
  });
  it('expectedAfter is exact decimal arithmetic', () => {
    expect(expectedAfter('0.10', credit('0.20', null))).toBe('0.30');
    expect(expectedAfter('100.00', debit('100.00', null, '1.85'))).toBe('-1.85');
  });
});

describe('payer numbers', () => {
  it(`masked numbers need ${MIN_VISIBLE_DIGITS} trailing visible digits`, () => {
    expect(comparePayerNumbers('*****15', '+8801712345515')).toBe('unknown');
    expect(comparePayerNumbers('*****515', '+8801712345515')).toBe('agree');
    expect(comparePayerNumbers('*****516', '+8801712345515')).toBe('disagree');
  });
  it.each([
    ['+8801712345515', 'agree'],
    ['01712-345515', 'agree'],
    ['01712345516', 'disagree'],
    ['01XXXXXX515', 'agree'],
    ['019XXXXX515', 'disagree'],
    ['not a number', 'unknown'],
    ['', 'unknown'],
  ])('%s against +8801712345515: %s', (sms, expected) => {
    expect(comparePayerNumbers(sms, '+8801712345515')).toBe(expected);
  });
});

describe('id distance', () => {
  it.each([
    ['ABC123', 'ABC123', 0],
    ['abc123', 'ABC123', 0],
    ['ABC123', 'ABC124', 1],
    ['ABC1O3', 'ABC103', 0.5],
    ['ABCI23', 'ABC123', 0.5],
    ['ABCS23', 'ABC523', 0.5],
    ['ABCB23', 'ABC823', 0.5],
    ['ABC123', 'ACB123', 1],
    ['ABC123', 'ABC12', 1],
    ['ABC123', 'XYZ789', 6],
  ])('%s vs %s: %s', (a, b, d) => expect(idDistance(a, b)).toBe(d));
});

describe('parser: direction, balance, fee, sender number', () => {
  const gateway = {
    id: 1,
    senders: ['bKash'],
    templates: [
      { pattern: String.raw`^You have received Tk (?<amount>[\d,.]+) from (?<sender_number>[\dX*]+)\. Fee Tk (?<fee>[\d,.]+)\. Balance Tk (?<balance>\S+?)\. TrxID (?<trx_id>\w+)`, flags: 'i' },
      { pattern: String.raw`^Send Money Tk (?<amount>[\d,.]+) to (?<sender_number>\d+) successful\. Fee Tk (?<fee>[\d,.]+)\. Balance Tk (?<balance>[\d,.]+)\.(?: TrxID (?<trx_id>\w+))?`, flags: 'i', direction: 'out' as const, kind: 'send_money' },
    ],
  };
  it('reads a credit with its balance and fee', () => {
    expect(parseSms({ sender: 'bKash', body: 'You have received Tk 1,250.00 from 01XXXXXX515. Fee Tk 0.00. Balance Tk 5,432.10. TrxID bfc2xyz789 at now' }, [gateway])).toEqual({
      gatewayId: 1, direction: 'in', kind: null, amount: '1250.00', trxId: 'BFC2XYZ789', senderNumber: '01XXXXXX515', balance: '5432.10', balanceUnreadable: false, fee: '0.00', templateIndex: 0, statedAt: null,
    });
  });
  it('a balance that is not a number is marked unreadable, not dropped silently', () => {
    const p = parseSms({ sender: 'bKash', body: 'You have received Tk 100.00 from 01712345515. Fee Tk 0.00. Balance Tk lots. TrxID BFC2XYZ789' }, [gateway]);
    expect(p).toMatchObject({ balance: null, balanceUnreadable: true });
  });
  it('reads money out without an id, marked out', () => {
    expect(parseSms({ sender: 'bKash', body: 'Send Money Tk 500.00 to 01812345678 successful. Fee Tk 5.00. Balance Tk 4,927.10.' }, [gateway])).toMatchObject({
      direction: 'out', kind: 'send_money', amount: '500.00', trxId: null, fee: '5.00', balance: '4927.10',
    });
  });
  it.each([
    ['no id', 'You have received Tk 100.00 from 01712345515. Fee Tk 0.00. Balance Tk 1.00. TrxID '],
    ['absurd amount', 'You have received Tk 99999999999999999.00 from 01712345515. Fee Tk 0.00. Balance Tk 1.00. TrxID BFC2XYZ789'],
    ['zero amount', 'You have received Tk 0.00 from 01712345515. Fee Tk 0.00. Balance Tk 1.00. TrxID BFC2XYZ789'],
    ['three decimals', 'You have received Tk 100.001 from 01712345515. Fee Tk 0.00. Balance Tk 1.00. TrxID BFC2XYZ789'],
  ])('%s: not parsed', (_n, body) => {
    expect(parseSms({ sender: 'bKash', body }, [gateway])).toBeNull();
  });
});

describe('balance chain: a later SMS decided first (out-of-order delivery)', () => {
  it('a reading between its previous and an already decided next must agree with both, else the chain forked', () => {
    const prev = { balance: '1000.00', trusted: true };
    expect(chainState(credit('100.00', '1100.00'), prev, { direction: 'in', amount: '200.00', fee: null, balance: '1300.00' }).state).toBe('follows');
    expect(chainState(credit('100.00', '1100.00'), prev, { direction: 'in', amount: '200.00', fee: null, balance: '1200.00' }).state).toBe('mismatch');
    expect(chainState(credit('100.00', '1100.00'), null, { direction: 'out', amount: '50.00', fee: '1.00', balance: '1049.00' }).state).toBe('first');
  });
});
