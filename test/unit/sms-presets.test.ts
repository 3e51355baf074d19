import { paysPayments } from '../../server/domain/sms/templates/template.ts';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkAgainstMoneyOut } from '../../server/domain/sms/templates/presets/gateway-input.ts';
import { classifySms, GATEWAY_PRESETS, findPreset, presetTemplates } from '../../server/domain/sms/templates/presets/index.ts';
import { parseSms, type GatewayParseConfig } from '../../server/domain/sms/templates/parser.ts';
import { sameSender } from '../../server/domain/sms/templates/senders.ts';
import { compileTemplate } from '../../server/domain/sms/templates/template.ts';

interface Expected {
  direction: 'in' | 'out';
  kind: string;
  amount: string;
  trx_id: string | null;
  sender_number: string | null;
  balance: string | null;
  fee: string | null;
}
interface FixtureMessage {
  sender: string;
  body: string;
  expected: Expected | null;
  source: string | string[];
}

const load = (wallet: string) =>
  (JSON.parse(readFileSync(new URL(`../fixtures/sms/${wallet}.json`, import.meta.url), 'utf8')) as { messages: FixtureMessage[] }).messages;

const fixtures = GATEWAY_PRESETS.flatMap((p) => load(p.code).map((m) => ({ wallet: p.code, ...m })));
const label = (m: { wallet: string; body: string }) => `${m.wallet}: ${m.body.replace(/\s+/g, ' ').slice(0, 70)}`;
const gatewayOf = (code: string): GatewayParseConfig => {
  const p = findPreset(code)!;
  return { id: GATEWAY_PRESETS.indexOf(p) + 1, senders: [...p.senders], templates: presetTemplates(p) };
};
const allGateways = GATEWAY_PRESETS.map((p) => gatewayOf(p.code));

describe('presets', () => {
  it('cover the nine wallets, each with senders, a money-in template and a fixture file with a cited source', () => {
    expect(GATEWAY_PRESETS.map((p) => p.code)).toEqual(['bkash', 'nagad', 'rocket', 'upay', 'tap', 'okwallet', 'mcash', 'cellfin', 'pathaopay']);
    for (const p of GATEWAY_PRESETS) {
      expect(p.senders.length).toBeGreaterThan(0);
      expect(p.templates.some((t) => t.direction === 'in' && t.verified)).toBe(true);
      const messages = load(p.code);
      expect(messages.some((m) => m.expected?.direction === 'in')).toBe(true);
      for (const m of messages) expect(String(m.source)).toMatch(/^https:\/\/github\.com\//);
    }
  });

  it.each(GATEWAY_PRESETS.flatMap((p) => p.templates.map((t, i) => [p.code, i, t] as const)))('%s template %i passes compileTemplate', (_c, _i, t) => {
    expect(() => compileTemplate(t.pattern, t.flags, t.direction)).not.toThrow();
  });

  it.each(GATEWAY_PRESETS.flatMap((p) => p.outSamples.map((body) => [p.code, body.replace(/\s+/g, ' ').slice(0, 60), body] as const)))(
    '%s money-out sample is read as money out by its own templates: %s',
    (code, _l, body) => {
      expect(classifySms(body, findPreset(code)!.templates)).toMatchObject({ direction: 'out' });
    },
  );

  it('no preset money-in template reads any wallet money-out sample', () => {
    expect(() => checkAgainstMoneyOut(GATEWAY_PRESETS.flatMap((p) => presetTemplates(p)))).not.toThrow();
  });
});

describe('fixtures from public sources', () => {
  it.each(fixtures.map((m) => [label(m), m] as const))('%s', (_l, m) => {
    const preset = findPreset(m.wallet)!;
    expect(preset.senders.some((s) => sameSender(s, m.sender))).toBe(true);
    const got = classifySms(m.body, preset.templates);
    const parsed = parseSms({ sender: m.sender, body: m.body }, allGateways);
    if (m.expected === null || m.expected.direction === 'out') {
      // Never a credit, by the presets or by the parser that matches payments
      // (which reads money out as such, for the balance chain: docs/matching.md).
      expect(got?.direction ?? 'none').not.toBe('in');
      expect(parsed?.direction ?? 'none').not.toBe('in');
    }
    if (m.expected === null) expect(parsed).toBeNull();
    if (m.expected?.direction === 'out' && parsed) expect(parsed).toMatchObject({ direction: 'out', amount: m.expected.amount });
    if (m.expected === null) return;
    expect(got).toMatchObject({
      direction: m.expected.direction,
      kind: m.expected.kind,
      amount: m.expected.amount,
      trxId: m.expected.trx_id,
      senderNumber: m.expected.sender_number,
      balance: m.expected.balance,
      fee: m.expected.fee,
    });
    if (m.expected.direction === 'in') {
      expect(parsed).toMatchObject({ gatewayId: gatewayOf(m.wallet).id, amount: m.expected.amount, trxId: m.expected.trx_id });
    }
  });
});

describe('look-alikes never parse as money in', () => {
  const incoming = fixtures.filter((m) => m.expected?.direction === 'in');
  const lookAlikes: Array<[string, string, string]> = [
    ...incoming.map((m) => [`${m.wallet} from a fullwidth sender`, m.sender.replace(/[a-z0-9]/gi, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)), m.body] as [string, string, string]),
    ...incoming.map((m) => [`${m.wallet} with a zero-width space in the sender`, `${m.sender}\u200b`, m.body] as [string, string, string]),
    ...incoming.map((m) => [`${m.wallet} forwarded by a person`, '01712345678', m.body] as [string, string, string]),
    ...incoming.map((m) => [`${m.wallet} quoted after "Fwd:"`, m.sender, `Fwd: ${m.body}`] as [string, string, string]),
    ['an OTP', 'bKash', 'Your bKash verification code is 482913. Never share this code. TrxID ABCDEFGH12'],
    ['a promotion', 'bKash', 'You have received a special offer! Get Tk 100 cashback on Tk 500 payment. TrxID not needed. Dial *247#'],
    ['a failed transaction', 'bKash', 'Send Money Tk 500.00 to 01712345678 failed. Insufficient balance. TrxID BFC2XYZ790'],
    ['a request for money', 'bKash', 'Request Money: 01712345678 requested Tk 500.00 from you. Ref 42.'],
    ['an absurd amount', 'bKash', 'You have received Tk 9999999999999999.00 from 01712345678. Fee Tk 0.00. Balance Tk 5.00. TrxID BFC2XYZ789 at 15/03/2026 14:32'],
    ['a zero amount', 'bKash', 'You have received Tk 0.00 from 01712345678. Fee Tk 0.00. Balance Tk 5.00. TrxID BFC2XYZ789 at 15/03/2026 14:32'],
    ['a non-numeric balance', 'NAGAD', 'Money Received.\nAmount: Tk 500.00\nSender: 01712345678\nRef: N/A\nTxnID: 71A2B3C4\nBalance: Tk 1,2,3,4\n15/03/2026 14:32'],
    ['an empty body', 'bKash', ''],
    ['an enormous body', 'bKash', `You have received Tk 500.00 from 01712345678. Ref ${'x'.repeat(3000)}. Fee Tk 0.00. Balance Tk 5.00. TrxID BFC2XYZ789 at 15/03/2026 14:32`],
  ];
  it.each(lookAlikes)('%s', (_l, sender, body) => {
    expect(parseSms({ sender, body }, allGateways)).toBeNull();
    const official = GATEWAY_PRESETS.find((p) => p.senders.some((s) => sameSender(s, sender)));
    if (official) expect(classifySms(body, official.templates)?.direction ?? 'none').not.toBe('in');
  });

  it("a bKash cashback is read as money in that never pays: the balance chain counts it, no payment does", () => {
    const parsed = parseSms({ sender: 'bKash', body: 'Congratulations! You have received Cashback Tk 50.00. Balance Tk 71.91. TrxID GHI9012RSU at 29/05/2026 19:15.' }, allGateways);
    expect(parsed).toMatchObject({ direction: 'in', kind: 'cashback', amount: '50.00', balance: '71.91' });
    expect(paysPayments(parsed!)).toBe(false);
  });

  it('hostile bodies finish quickly', () => {
    const started = Date.now();
    for (const p of allGateways) {
      for (const body of ['You have received Tk 1'.padEnd(2000, '1'), `Money Received. Amount: Tk 1 Sender: 0${' '.repeat(1990)}`, 'Tk'.repeat(1000)]) {
        parseSms({ sender: p.senders[0]!, body }, allGateways);
        classifySms(body, findPreset(GATEWAY_PRESETS[p.id - 1]!.code)!.templates);
      }
    }
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('an admin money-in template that reads a money-out message is refused', () => {
  it.each([
    String.raw`(?<amount>\d[\d,]{0,12}\.\d{2})[\s\S]{0,200}TrxID\s+(?<trx_id>[A-Z0-9]{8,12})`,
    String.raw`Tk\s(?<amount>[\d,.]{1,15})\sto\s[\s\S]{0,100}TrxID:?\s(?<trx_id>\w{6,12})`,
  ])('%s', (pattern) => {
    expect(() => checkAgainstMoneyOut([{ pattern, flags: 'i', direction: 'in' }])).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'sms_templates.0.pattern' }));
    // The same regex is fine as a money-out template.
    expect(() => checkAgainstMoneyOut([{ pattern, flags: 'i', direction: 'out' }])).not.toThrow();
  });
});
