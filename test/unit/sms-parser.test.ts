import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MAX_SMS_BODY_LENGTH,
  normalizeParsedAmount,
  normalizeSender,
  parseSms,
  type GatewayParseConfig,
} from '../../server/domain/sms/templates/parser.ts';
import { defaultGatewayTemplates } from '../../server/domain/sms/templates/presets/index.ts';

interface Fixture<T> {
  messages: T[];
}
type Received = { gateway: keyof typeof defaultGatewayTemplates; sender: string; body: string; expected: { amount: string; trxId: string; senderNumber: string | null } };
type LookAlike = { sender: string; officialSender?: string; why: string; body: string };

const load = <T>(name: string) =>
  (JSON.parse(readFileSync(new URL(`../fixtures/sms/${name}`, import.meta.url), 'utf8')) as Fixture<T>).messages;

const gatewayIds = { bkash: 1, nagad: 2, rocket: 3 } as const;
const gateways: GatewayParseConfig[] = Object.entries(defaultGatewayTemplates).map(([name, g]) => ({
  id: gatewayIds[name as keyof typeof gatewayIds],
  senders: [...g.senders],
  templates: [...g.templates],
}));

describe('parseSms on genuine money-received messages', () => {
  const received = load<Received>('money-received.json');

  it('has at least four messages per gateway', () => {
    for (const name of Object.keys(gatewayIds)) expect(received.filter((m) => m.gateway === name).length).toBeGreaterThanOrEqual(4);
  });

  it.each(received.map((m) => [m.gateway, m.body.replace(/\s+/g, ' ').slice(0, 60), m] as const))('%s: %s', (gateway, _label, m) => {
    // The presets' templates also read balance and fee (checked by their own fixtures).
    expect(parseSms({ sender: m.sender, body: m.body }, gateways)).toMatchObject({
      gatewayId: gatewayIds[gateway],
      templateIndex: expect.any(Number),
      direction: 'in',
      ...m.expected,
    });
  });
});

describe('parseSms on look-alikes', () => {
  it.each(load<LookAlike>('look-alikes.json').map((m) => [m.sender, m.why, m] as const))('%s, %s: no credit', (_s, _w, m) => {
    const parsed = parseSms({ sender: m.sender, body: m.body }, gateways);
    // A debit of the wallet is read as money out (balance chain evidence, never a match); anything else not at all.
    if (/debit/.test(m.why)) expect(parsed?.direction ?? 'none').not.toBe('in');
    else expect(parsed).toBeNull();
  });

  const spoofed = load<LookAlike>('look-alikes.json').filter((m) => m.officialSender);
  it.each(spoofed.map((m) => [m.sender, m] as const))('the text spoofed by %s does parse from the official sender', (_s, m) => {
    expect(parseSms({ sender: m.officialSender!, body: m.body }, gateways)).not.toBeNull();
  });
});

describe('parseSms mechanics', () => {
  const body = 'Paid 1,250.00 ref ab12cd';
  const custom = (templates: GatewayParseConfig['templates'], senders = ['Shop']): GatewayParseConfig[] => [{ id: 9, senders, templates }];
  const good = { pattern: String.raw`^Paid (?<amount>[\d,.]+) ref (?<trx_id>\w+)$` };

  it('tries templates in order and reports which one matched', () => {
    const r = parseSms({ sender: 'shop', body }, custom([{ pattern: String.raw`^Got (?<amount>\d+) (?<trx_id>\w+)` }, good]));
    expect(r).toEqual({ gatewayId: 9, direction: 'in', kind: null, amount: '1250.00', trxId: 'AB12CD', senderNumber: null, balance: null, balanceUnreadable: false, fee: null, templateIndex: 1, statedAt: null });
  });

  it('moves on when a template matches but its amount is not valid', () => {
    const loose = { pattern: String.raw`^Paid (?<amount>.+?) (?<trx_id>\w+)$` };
    expect(parseSms({ sender: 'Shop', body }, custom([loose, good]))?.templateIndex).toBe(1);
  });

  it('skips a stored template that no longer validates instead of throwing', () => {
    expect(parseSms({ sender: 'Shop', body }, custom([{ pattern: '(' }, { pattern: 'x', flags: 'g' }, good]))?.templateIndex).toBe(2);
  });

  it('never tries gateways whose senders do not include the SMS sender', () => {
    expect(parseSms({ sender: 'Shop2', body }, custom([good]))).toBeNull();
    expect(parseSms({ sender: '', body }, custom([good], ['']))).toBeNull();
  });

  it('picks the first gateway that parses when two share a sender', () => {
    const two: GatewayParseConfig[] = [
      { id: 1, senders: ['Shop'], templates: [{ pattern: String.raw`^Nope (?<amount>\d+)(?<trx_id>\w+)` }] },
      { id: 2, senders: ['Shop'], templates: [good] },
      { id: 3, senders: ['Shop'], templates: [good] },
    ];
    expect(parseSms({ sender: 'Shop', body }, two)?.gatewayId).toBe(2);
  });

  it('a money-out reading of any gateway sharing the sender wins over another gateway\'s credit reading', () => {
    // An admin's template that reads a debit as a credit, next to the preset that knows it is a debit.
    const debit = 'Payment Tk 145.00 to 01700000026 successful. Ref 11. Fee Tk 0.00. Balance Tk 139.40. TrxID BKE1AIYP60 at 14/11/2024 23:25';
    const credit = { pattern: String.raw`^Payment Tk (?<amount>[\d,.]+) to \d{11} successful\. Ref 11\.[^\n]{0,60}TrxID (?<trx_id>\w{10})` };
    const two: GatewayParseConfig[] = [
      { id: 1, senders: ['bKash'], templates: [credit] },
      { id: 2, senders: ['bKash'], templates: [...defaultGatewayTemplates.bkash.templates] },
    ];
    expect(parseSms({ sender: 'bKash', body: debit }, two)).toMatchObject({ gatewayId: 2, direction: 'out', kind: 'payment', amount: '145.00' });
    // Either order.
    expect(parseSms({ sender: 'bKash', body: debit }, [...two].reverse())).toMatchObject({ gatewayId: 2, direction: 'out' });
    // Alone, the admin's gateway reads it as a credit: only the other gateway's knowledge makes it a debit.
    expect(parseSms({ sender: 'bKash', body: debit }, [two[0]!])).toMatchObject({ direction: 'in' });
  });

  it('trims an empty sender_number group to null and keeps a present one trimmed', () => {
    const t = { pattern: String.raw`^Paid (?<amount>[\d,.]+) ref (?<trx_id>\w+)(?: by (?<sender_number>.*))?$` };
    expect(parseSms({ sender: 'Shop', body }, custom([t]))?.senderNumber).toBeNull();
    expect(parseSms({ sender: 'Shop', body: `${body} by  017 ` }, custom([t]))?.senderNumber).toBe('017');
  });

  it('refuses an empty or whitespace-only trx id', () => {
    const t = { pattern: String.raw`^Paid (?<amount>[\d,.]+) ref(?<trx_id>\s*)` };
    expect(parseSms({ sender: 'Shop', body: 'Paid 5.00 ref   ' }, custom([t]))).toBeNull();
  });

  it('ignores bodies longer than the cap', () => {
    const long = `${body}${' '.repeat(MAX_SMS_BODY_LENGTH)}`;
    const t = { pattern: String.raw`^Paid (?<amount>[\d,.]+) ref (?<trx_id>\w+)` };
    expect(parseSms({ sender: 'Shop', body: long }, custom([t]))).toBeNull();
  });
});

describe('normalizeParsedAmount', () => {
  it.each([
    ['1,250', '1250.00'],
    ['1250.5', '1250.50'],
    ['1,250.00', '1250.00'],
    ['12,50,000.75', '1250000.75'],
    ['1,000,000', '1000000.00'],
    [' 500 ', '500.00'],
    ['0.01', '0.01'],
    ['007.10', '7.10'],
    ['999999999999.99', '999999999999.99'],
  ])('%s -> %s', (raw, expected) => expect(normalizeParsedAmount(raw)).toBe(expected));

  it.each(['0', '0.00', '-5.00', '', 'abc', '1.234', '1,2,50', '12,50', '1,250,00', '.50', '5.', '1e3', '1 250', '1000000000000.00', '1,250.', null, undefined])(
    '%s -> null',
    (raw) => expect(normalizeParsedAmount(raw)).toBeNull(),
  );
});

describe('normalizeSender', () => {
  it.each([
    ['bKash', 'BKASH'],
    ['NAGAD', 'nagad'],
  ])('%s equals %s', (a, b) => expect(normalizeSender(a)).toBe(normalizeSender(b)));

  it.each([
    ['bKash', 'bKash-Offer'],
    ['16216', '+16216'],
    ['NAGAD', 'NAGAD1'],
  ])('%s differs from %s', (a, b) => expect(normalizeSender(a)).not.toBe(normalizeSender(b)));
});

describe('default templates on hostile input', () => {
  it.each([
    ['bKash', `You have received Tk 1${',1'.repeat(300)} from 01712345678 ${'TrxID '.repeat(250)}`],
    ['NAGAD', `Money Received. Amount: Tk 1 Sender: 0171234567 ${'TxnID: '.repeat(250)}`],
    ['16216', `Tk1 received from A/C:017123456785 ${'TxnId:x '.repeat(200)}`],
  ])('%s: a max-length body without a valid id is rejected fast', (sender, body) => {
    const started = performance.now();
    expect(parseSms({ sender, body: body.slice(0, MAX_SMS_BODY_LENGTH) }, gateways)).toBeNull();
    expect(performance.now() - started).toBeLessThan(200);
  });
});
