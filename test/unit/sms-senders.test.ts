import { describe, expect, it } from 'vitest';
import { sameSender, senderKey } from '../../server/domain/sms/templates/senders.ts';
import { sameSender as sdkSameSender } from '../../clients/device/sms-filter.ts';

describe('sameSender: names are ASCII, case-insensitive, nothing else', () => {
  it.each([
    ['bKash', 'bKash'],
    ['bKash', 'BKASH'],
    ['bKash', 'bkash'],
    ['NAGAD', 'Nagad'],
    ['tap.', 'TAP.'],
    ['IBBL .', 'ibbl .'],
    ['PathaoPay', 'pathaopay'],
  ])('%j equals %j', (a, b) => {
    expect(sameSender(a, b)).toBe(true);
    expect(sdkSameSender(a, b)).toBe(true);
  });

  it.each([
    ['bKash', 'ｂＫａｓｈ', 'fullwidth letters'],
    ['bKash', 'bKаsh', 'Cyrillic a'],
    ['bKash', 'bKash\u200b', 'zero-width space'],
    ['bKash', 'b\u00adKash', 'soft hyphen'],
    ['bKash', 'bKash\u0000', 'NUL'],
    ['bKash', 'b Kash', 'inner space'],
    ['bKash', 'bKash-Offer', 'suffix'],
    ['bKash', 'bKash Info', 'suffix'],
    ['NAGAD', 'NAGAD1', 'suffix'],
    ['tap.', 'tap', 'missing dot'],
    ['16216', '16217', 'other short code'],
    ['16216', '+16216', 'a plus makes it a phone number'],
    ['bKash', '', 'empty'],
    // Compared exactly as the phone received it: nothing is trimmed (these each completed a live payment when it was).
    ['bKash', ' bKash ', 'ASCII spaces around'],
    ['bKash', '\ufeffbKash', 'leading BOM'],
    ['bKash', 'bKash\ufeff', 'trailing BOM'],
    ['bKash', '\u00a0bKash', 'leading no-break space'],
    ['bKash', '\u3000bKash\u2028', 'ideographic space and line separator'],
    ['bKash', '\u2000bKash', 'en quad'],
    ['bKash', '\u1680bKash', 'ogham space mark'],
    ['bKash', '\u202ebKash', 'bidi override'],
    ['NAGAD', '\u200bNAGAD', 'leading zero-width space'],
    ['16216', '\u00a016216', 'short code with a no-break space'],
  ])('%j differs from %j (%s)', (a, b) => {
    expect(sameSender(a, b)).toBe(false);
    expect(sdkSameSender(a, b)).toBe(false);
  });

  it('a name with non-ASCII or control characters equals nothing, not even itself', () => {
    for (const s of ['ｂＫａｓｈ', 'bKash\u200b', 'বিকাশ', 'bKash\n']) {
      expect(senderKey(s)).toBeNull();
      expect(sameSender(s, s)).toBe(false);
    }
  });
});

describe('sameSender: numbers compare in E.164 (Bangladesh by default)', () => {
  const forms = ['+8801847348685', '8801847348685', '008801847348685', '01847-348685', '01847348685', '01847 348 685'];
  it.each(forms.flatMap((a) => forms.map((b) => [a, b] as const)))('%s equals %s', (a, b) => {
    expect(sameSender(a, b)).toBe(true);
    expect(sdkSameSender(a, b)).toBe(true);
  });

  it('keys are E.164 for phone numbers and digits for short codes', () => {
    expect(senderKey('01847-348685')).toBe('+8801847348685');
    expect(senderKey('16216')).toBe('#16216');
    expect(senderKey('bKash')).toBe('name:bkash');
  });

  it.each([
    ['01847348685', '01847348686'],
    ['+8801847348685', '+918847348685'],
    ['01847348685', '1847348685x'],
  ])('%s differs from %s', (a, b) => expect(sameSender(a, b)).toBe(false));
});
