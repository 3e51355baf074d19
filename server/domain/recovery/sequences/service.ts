import { transaction, type Db } from '../../db.ts';
import { MAX_BACKFILL_WINDOW_DAYS } from '../../../../contract/admin/recovery.ts';
import { AppError } from '../../../../contract/common/errors.ts';
import { activeDeviceIds, addToCounter, deviceExists, devicesWithCounters, insertSequenceRequest, markRequested, recentCounters } from './queries.ts';

/**
 * Per-SIM sequence numbers (docs/recovery.md "Sequence numbers"). The app
 * numbers every SMS from an allowed sender, forwarded or screened out on the
 * phone, per SIM slot, and sends the numbers; the service keeps per
 * (device, slot, epoch) the numbers seen, and a number below the highest that
 * was neither forwarded nor reported screened is a hole: asked back at once,
 * in the same transaction that saw it, as a `sequence_gap` backfill naming
 * exactly those numbers. Each hole is asked once (the request's retries and
 * failure are those of every backfill); one that stays missing shows in the
 * completeness view.
 */

/** The default epoch, for an app that sends none. */
export const DEFAULT_SEQUENCE_EPOCH = 'default';
/** Slot stored for SMS whose SIM slot the phone does not know. */
export const UNKNOWN_SLOT = -1;
/** Most numbers one `sequence_gap` request names; further holes are asked by the next request of the counter. */
export const MAX_NUMBERS_PER_REQUEST = 500;
/** How far back the completeness view looks. */
export const COMPLETENESS_WINDOW_MS = 24 * 3_600_000;
/** Most missing numbers the view lists per counter (the count is always whole). */
const MAX_LISTED_MISSING = 200;

export interface SequenceReport {
  epoch?: string;
  /** Numbers of SMS the phone forwarded (stored or refused by the service's own rules: seen either way). */
  forwarded: Array<{ simSlot: number | null; sequence: number }>;
  /** Ranges the phone screened out. */
  screened: Array<{ simSlot: number | null; from: number; to: number }>;
}

type Ranges = Array<[number, number]>; // inclusive

/** Inclusive ranges as multirange text (`{[1,4),[7,8)}`); the database normalises overlaps. */
function multirange(ranges: Ranges): string {
  return `{${ranges.map(([a, b]) => `[${a},${b + 1})`).join(',')}}`;
}

/** Multirange text (canonical `[a,b)` ranges) as its numbers, at most `limit`. */
export function numbersOf(text: string, limit = Infinity): { numbers: number[]; count: number } {
  const numbers: number[] = [];
  let count = 0;
  for (const m of text.matchAll(/\[(\d+),(\d+)\)/g)) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    count += b - a;
    for (let n = a; n < b && numbers.length < limit; n++) numbers.push(n);
  }
  return { numbers, count };
}

/** Records a request's numbers and asks the phone for every new hole. */
export async function recordSequences(db: Db, deviceId: number, report: SequenceReport): Promise<void> {
  const epoch = report.epoch ?? DEFAULT_SEQUENCE_EPOCH;
  const bySlot = new Map<number, { forwarded: Ranges; screened: Ranges; highest: number }>();
  const slotOf = (s: number | null) => {
    const key = s ?? UNKNOWN_SLOT;
    let c = bySlot.get(key);
    if (!c) bySlot.set(key, (c = { forwarded: [], screened: [], highest: 0 }));
    return c;
  };
  for (const f of report.forwarded) {
    const c = slotOf(f.simSlot);
    c.forwarded.push([f.sequence, f.sequence]);
    c.highest = Math.max(c.highest, f.sequence);
  }
  for (const r of report.screened) {
    const c = slotOf(r.simSlot);
    c.screened.push([r.from, r.to]);
    c.highest = Math.max(c.highest, r.to);
  }
  if (bySlot.size === 0) return;
  // Slots in order: two requests of one phone lock its counters in the same order.
  for (const [simSlot, c] of [...bySlot].sort((a, b) => a[0] - b[0])) {
    await transaction(db, async (tx) => {
      const counter = await addToCounter(tx, { deviceId, simSlot, epoch, forwarded: multirange(c.forwarded), screened: multirange(c.screened), highest: c.highest });
      const { numbers } = numbersOf(counter.unasked, MAX_NUMBERS_PER_REQUEST);
      if (numbers.length === 0) return;
      const now = Date.now();
      const from = new Date(Math.max(counter.first_seen_at.getTime() - 60_000, now - MAX_BACKFILL_WINDOW_DAYS * 86_400_000));
      if (!(await insertSequenceRequest(tx, { deviceId, from, to: new Date(now), simSlot, epoch, numbers }))) return;
      await markRequested(tx, { id: counter.id, numbers: multirange(numbers.map((n) => [n, n])) });
    });
  }
}

export interface CounterView {
  simSlot: number | null;
  epoch: string;
  highest: number;
  forwardedCount: number;
  screenedCount: number;
  missingCount: number;
  /** Missing numbers, ascending (at most 200 listed). */
  missing: number[];
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export interface CompletenessView {
  deviceId: number;
  /** `unknown`: the phone never sent a sequence number (an app without numbering). */
  verdict: 'complete' | 'missing' | 'unknown';
  since: Date;
  highest: number | null;
  missingCount: number;
  screenedCount: number;
  counters: CounterView[];
}

/** Per phone, over the last 24 hours: the counters that numbered an SMS in that time, with their holes. */
export async function smsCompleteness(db: Db, deviceIds: number[], now = new Date()): Promise<CompletenessView[]> {
  const since = new Date(now.getTime() - COMPLETENESS_WINDOW_MS);
  const [rows, numbered] = await Promise.all([recentCounters(db, { deviceIds, since }), devicesWithCounters(db, deviceIds)]);
  return deviceIds.map((deviceId) => {
    const counters: CounterView[] = rows
      .filter((r) => r.device_id === deviceId)
      .map((r) => {
        const { numbers, count } = numbersOf(r.missing, MAX_LISTED_MISSING);
        return {
          simSlot: r.sim_slot === UNKNOWN_SLOT ? null : r.sim_slot,
          epoch: r.epoch,
          highest: r.highest,
          forwardedCount: r.forwarded_count,
          screenedCount: r.screened_count,
          missingCount: count,
          missing: numbers,
          firstSeenAt: r.first_seen_at,
          lastSeenAt: r.last_seen_at,
        };
      });
    const missingCount = counters.reduce((n, c) => n + c.missingCount, 0);
    return {
      deviceId,
      verdict: !numbered.has(deviceId) ? 'unknown' : missingCount > 0 ? 'missing' : 'complete',
      since,
      highest: counters.length > 0 ? Math.max(...counters.map((c) => c.highest)) : null,
      missingCount,
      screenedCount: counters.reduce((n, c) => n + c.screenedCount, 0),
      counters,
    };
  });
}

/** One phone's completeness; an unknown device is DEVICE_NOT_FOUND (brand scope is the route guard's). */
export async function deviceSmsCompleteness(db: Db, deviceId: number): Promise<CompletenessView> {
  if (!(await deviceExists(db, deviceId))) throw new AppError('DEVICE_NOT_FOUND');
  return (await smsCompleteness(db, [deviceId]))[0]!;
}

/** Every active phone's completeness, by device id. */
export async function listSmsCompleteness(db: Db, f: { brandId?: number; brandIds: number[] | null; mode?: 'live' | 'test' }): Promise<CompletenessView[]> {
  return smsCompleteness(db, await activeDeviceIds(db, f));
}
