import type { EntityManager } from '../../infra/database/orm.ts';

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

/** Records one sample; returns the stored (smoothed) offset in ms, or null when the sample was ignored. */
export async function recordDeviceClock(em: EntityManager, deviceId: number, deviceTime: Date): Promise<number | null> {
  const sample = deviceTime.getTime() - Date.now();
  if (!Number.isFinite(sample) || Math.abs(sample) > MAX_CLOCK_OFFSET_MS) return null;
  const rows = await em.execute<Array<{ clock_offset_ms: number }>>(
    `UPDATE devices SET
        clock_offset_ms = CASE
          WHEN clock_offset_ms IS NULL OR abs(?::integer - clock_offset_ms) > ? THEN ?::integer
          ELSE round(clock_offset_ms + ? * (?::integer - clock_offset_ms))::integer END,
        clock_offset_at = now()
      WHERE id = ?
      RETURNING clock_offset_ms`,
    [sample, CLOCK_JUMP_MS, sample, CLOCK_SMOOTHING, sample, deviceId],
  );
  return rows[0] ? Number(rows[0].clock_offset_ms) : null;
}
