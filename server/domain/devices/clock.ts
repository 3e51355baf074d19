import { type Db } from '../db.ts';
import { storeClockOffset } from './queries/session.ts';

/**
 * Phone clocks run minutes fast or slow. A phone reports its own time with a
 * heartbeat or an SMS batch (`device_time`); the difference to the server's
 * clock at receipt is its offset (network delay is seconds, small against the
 * minutes being corrected). It is smoothed (a new sample moves it 30 %) so one
 * delayed request does not swing it, but a jump of more than 10 minutes (the
 * user set the clock, a time zone bug) replaces it outright. SMS matching
 * subtracts it from the SMS times the phone reports (docs/matching.md).
 */

// The smoothing and the jump are applied by the UPDATE itself (queries/session.ts `storeClockOffset`).
/** Offsets beyond a day are not a skewed clock but a wrong one: ignored. */
const MAX_CLOCK_OFFSET_MS = 86_400_000;

/** The offset a phone's time shows now, or null when it is to be ignored. */
function sampleOf(deviceTime: Date): number | null {
  const sample = deviceTime.getTime() - Date.now();
  return Number.isFinite(sample) && Math.abs(sample) <= MAX_CLOCK_OFFSET_MS ? sample : null;
}

/** Records one sample; returns the stored (smoothed) offset in ms, or null when the sample was ignored. */
export async function recordDeviceClock(em: Db, deviceId: number, deviceTime: Date): Promise<number | null> {
  const sample = sampleOf(deviceTime);
  if (sample === null) return null;
  return (await storeClockOffset(em, deviceId, sample)) ?? null;
}
