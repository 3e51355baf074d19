import { sql } from 'kysely';
import { prepared, type Db } from '../db.ts';

/**
 * Phone clocks run minutes fast or slow. A phone reports its own time with a
 * heartbeat or an SMS batch (`device_time`); the difference to the server's
 * clock at receipt is its offset (network delay is seconds, small against the
 * minutes being corrected). It is smoothed (a new sample moves it 30 %) so one
 * delayed request does not swing it, but a jump of more than 10 minutes (the
 * user set the clock, a time zone bug) replaces it outright. SMS matching
 * subtracts it from the SMS times the phone reports (docs/matching.md).
 */

const CLOCK_SMOOTHING = 0.3;
const CLOCK_JUMP_MS = 10 * 60_000;
/** Offsets beyond a day are not a skewed clock but a wrong one: ignored. */
const MAX_CLOCK_OFFSET_MS = 86_400_000;

/** The sample's UPDATE, compiled once (db.ts `prepared`): recorded before each forwarded batch's records. */
const storeClockSample = prepared((k, $: { deviceId: number; sample: number }) =>
  k
    .updateTable('devices')
    .set({
      // Raw: the smoothing reads the stored offset in the same statement (no read-modify-write race).
      clock_offset_ms: sql<number>`CASE
          WHEN clock_offset_ms IS NULL OR abs(${$.sample}::integer - clock_offset_ms) > ${CLOCK_JUMP_MS}::integer THEN ${$.sample}::integer
          ELSE round(clock_offset_ms + ${CLOCK_SMOOTHING}::numeric * (${$.sample}::integer - clock_offset_ms))::integer END`,
      clock_offset_at: sql<Date>`now()`,
    })
    .where('id', '=', $.deviceId)
    .returning('clock_offset_ms'),
);

/** The offset a phone's time shows now, or null when it is to be ignored. */
function sampleOf(deviceTime: Date): number | null {
  const sample = deviceTime.getTime() - Date.now();
  return Number.isFinite(sample) && Math.abs(sample) <= MAX_CLOCK_OFFSET_MS ? sample : null;
}

/** Records one sample; returns the stored (smoothed) offset in ms, or null when the sample was ignored. */
export async function recordDeviceClock(em: Db, deviceId: number, deviceTime: Date): Promise<number | null> {
  const sample = sampleOf(deviceTime);
  if (sample === null) return null;
  const row = await storeClockSample.executeTakeFirst(em, { deviceId, sample });
  return row ? row.clock_offset_ms : null;
}
