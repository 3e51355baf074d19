import { describe, expect, it } from 'vitest';
import { formatDeadline } from '../../server/http/checkout-pages/format.ts';

/** The checkout's deadline names the clock it is in: the brand's zone, else UTC. */
describe('formatDeadline', () => {
  it.each([
    ['brand zone east of UTC', '2026-11-21T09:32:00.000Z', 'Asia/Dhaka', '21 Nov 2026, 15:32 (UTC+06:00 Asia/Dhaka)'],
    ['brand zone west of UTC, day before', '2026-11-21T02:05:00.000Z', 'America/New_York', '20 Nov 2026, 21:05 (UTC-05:00 America/New_York)'],
    ['half-hour offset', '2026-11-21T09:32:00.000Z', 'Asia/Kolkata', '21 Nov 2026, 15:02 (UTC+05:30 Asia/Kolkata)'],
    ['zone at UTC+0 keeps its name', '2026-11-21T09:32:00.000Z', 'Europe/London', '21 Nov 2026, 09:32 (UTC+00:00 Europe/London)'],
    ['UTC brand', '2026-11-21T00:07:00.000Z', 'UTC', '21 Nov 2026, 00:07 (UTC)'],
    ['no zone', '2026-11-21T23:59:00.000Z', null, '21 Nov 2026, 23:59 (UTC)'],
    ['unknown zone falls back to UTC', '2026-11-21T09:32:00.000Z', 'Mars/Olympus', '21 Nov 2026, 09:32 (UTC)'],
  ] as const)('%s', (_name, iso, zone, expected) => {
    expect(formatDeadline(iso, zone)).toBe(expected);
  });
});
