import { describe, expect, it } from 'vitest';
import { screenSms, type SmsFilterRules } from '../../clients/device/sms-filter.ts';
import { screenSms as serverScreenSms } from '../../server/domain/filter-rules/screen.ts';
import { DEFAULT_FILTER_RULES } from '../../server/domain/filter-rules/defaults.ts';
import fixtures from '../fixtures/sms/money-received.json' with { type: 'json' };

const defaults: SmsFilterRules = {
  allowed_senders: ['bKash', 'NAGAD', '16216'],
  positive_keywords: DEFAULT_FILTER_RULES.positiveKeywords,
  negative_keywords: DEFAULT_FILTER_RULES.negativeKeywords,
};

const cases: Array<[string, { sender: string; body: string }, ReturnType<typeof screenSms>]> = [
  ['a bKash payment', { sender: 'bKash', body: 'You have received Tk 500.00 from 01812345679. TrxID AGH4K9MXYZ at 02/04/2024 09:15' }, { forward: true }],
  ['sender compared without case', { sender: 'BKASH', body: 'You have received Tk 5.00. TrxID X1' }, { forward: true }],
  ['a fullwidth look-alike sender', { sender: 'ｂＫａｓｈ', body: 'You have received Tk 5.00. TrxID X1' }, { forward: false, reason: 'sender_not_allowed' }],
  ['inner spaces are not folded', { sender: 'B KASH', body: 'You have received Tk 5.00. TrxID X1' }, { forward: false, reason: 'sender_not_allowed' }],
  ['an unknown sender', { sender: '01711111111', body: 'You have received Tk 500.00. TrxID X1' }, { forward: false, reason: 'sender_not_allowed' }],
  ['an OTP from the wallet itself', { sender: 'bKash', body: 'Your bKash OTP is 123456. Do not share it.' }, { forward: false, reason: 'negative_keyword' }],
  ['negative wins over positive', { sender: 'bKash', body: 'You have received Tk 5.00. Your PIN is 1234' }, { forward: false, reason: 'negative_keyword' }],
  ['PIN inside a word is not PIN', { sender: 'bKash', body: 'Payment received for shopping. TrxID X2' }, { forward: true }],
  ['phrase across a line break', { sender: 'bKash', body: 'Enter your verification\ncode now; payment pending' }, { forward: false, reason: 'negative_keyword' }],
  ['Bangla negative keyword', { sender: 'Nagad', body: 'আপনার ওটিপি ১২৩৪। টাকা' }, { forward: false, reason: 'negative_keyword' }],
  ['Bangla positive keyword', { sender: 'Nagad', body: 'আপনি ৫০০ টাকা পেয়েছেন' }, { forward: true }],
  ['no positive keyword', { sender: 'bKash', body: 'Dear customer, enjoy 10% cashback this weekend' }, { forward: false, reason: 'no_positive_keyword' }],
];

describe('screenSms (the app-side SMS screening)', () => {
  it.each(cases)('%s', (_name, sms, expected) => {
    expect(screenSms(defaults, sms)).toEqual(expected);
  });

  it('an empty sender list allows no sender; empty keyword lists forward what has no negative keyword', () => {
    expect(screenSms({ allowed_senders: [], positive_keywords: [], negative_keywords: [] }, { sender: 'anyone', body: 'hello' })).toEqual({ forward: false, reason: 'sender_not_allowed' });
    const open: SmsFilterRules = { allowed_senders: ['anyone'], positive_keywords: [], negative_keywords: ['OTP'] };
    expect(screenSms(open, { sender: 'anyone', body: 'hello' })).toEqual({ forward: true });
    expect(screenSms(open, { sender: 'anyone', body: 'otp 1' })).toEqual({ forward: false, reason: 'negative_keyword' });
  });

  it('forwards every genuine money-received fixture under the default rules', () => {
    for (const m of fixtures.messages) expect(screenSms(defaults, m), m.body).toEqual({ forward: true });
  });

  it('decides exactly as the service’s reference implementation', () => {
    const all = [...cases.map((c) => c[1]), ...fixtures.messages];
    const server = { allowedSenders: defaults.allowed_senders as string[], positiveKeywords: defaults.positive_keywords as string[], negativeKeywords: defaults.negative_keywords as string[] };
    for (const sms of all) expect(screenSms(defaults, sms)).toEqual(serverScreenSms(server, sms));
  });
});
