import { describe, expect, it } from 'vitest';
import { parseStatedTime } from '../../server/domain/sms/matching/stated-time.ts';
import { parseSms } from '../../server/domain/sms/templates/parser.ts';
import { GATEWAY_PRESETS, presetTemplates } from '../../server/domain/sms/templates/presets/index.ts';

describe('the time an SMS states in its text (Bangladesh time, UTC+6)', () => {
  it.each([
    ['30/10/2025 21:02', '2025-10-30T15:02:00.000Z', 60_000],
    ['01/01/2024 00:05', '2023-12-31T18:05:00.000Z', 60_000],
    ['07/04/2024 4:20', '2024-04-06T22:20:00.000Z', 60_000],
    ['15/03/2024 02:32:10 pm', '2024-03-15T08:32:10.000Z', 1_000],
    ['15-MAR-24 02:32:10 pm', '2024-03-15T08:32:10.000Z', 1_000],
    ['15-Mar-24 12:05:00 am', '2024-03-14T18:05:00.000Z', 1_000],
    ['15-MAR-2024 12:05:00 pm', '2024-03-15T06:05:00.000Z', 1_000],
  ])('%s is %s', (raw, iso, precisionMs) => {
    expect(parseStatedTime(raw)).toEqual({ at: new Date(iso), precisionMs });
  });

  it.each(['31/02/2024 10:00', '15/13/2024 10:00', '15/03/2024 24:00', '15-XYZ-24 02:32:10 pm', '13:00 pm', 'now', '', '15/03/2024 13:00 pm'])('%j is no date', (raw) => {
    expect(parseStatedTime(raw)).toBeNull();
  });

  it("the presets read it: bKash's `at ...`, to the end of its minute", () => {
    const bkash = GATEWAY_PRESETS.find((p) => p.code === 'bkash')!;
    const parsed = parseSms(
      { sender: 'bKash', body: 'You have received Tk 500.00 from 01712345678. Ref 42. Fee Tk 0.00. Balance Tk 1,117.78. TrxID CJU0PZQ3U6 at 30/10/2025 21:02' },
      [{ id: 1, senders: bkash.senders, templates: presetTemplates(bkash) }],
    );
    expect(parsed?.statedAt).toEqual(new Date('2025-10-30T15:02:59.999Z'));
  });
});
