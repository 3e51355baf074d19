/**
 * Per-SIM sequence numbers (docs/recovery.md "Sequence numbers"): the app
 * numbers every SMS from an allowed sender of the filter rules (forwarded or
 * screened out on the phone) in the order it arrived, one counter per SIM slot
 * (SMS whose slot is unknown have a counter of their own), and sends the
 * numbers: `sequence` on each forwarded SMS, `screened_sequences` for those
 * its filter rules refused, `sequence_epoch` on the request. The service then
 * sees at once a number it never got and asks for exactly that one (a
 * `backfill_sms` command with `sequences`).
 *
 * The counters must survive app restarts: persist `state()` after every
 * `next()` (before forwarding). When the stored state is lost (reinstall,
 * cleared data), start without one: a new epoch begins at 1, and the service
 * never compares numbers of different epochs.
 */

export interface SmsSequenceState {
  /** Names the counters; a new one tells the service they restarted at 1. */
  epoch: string;
  /** Last number given, per slot (`"0"`, `"1"`..., `"unknown"`). */
  last: Record<string, number>;
}

const slotKey = (simSlot: number | null | undefined) => (simSlot === null || simSlot === undefined ? 'unknown' : String(simSlot));

function newEpoch(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return `e${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

export class SmsSequencer {
  #state: SmsSequenceState;

  /** `state`: what `state()` returned last run; absent or null starts a new epoch. */
  constructor(state?: SmsSequenceState | null, options: { newEpoch?: () => string } = {}) {
    this.#state = state ? { epoch: state.epoch, last: { ...state.last } } : { epoch: (options.newEpoch ?? newEpoch)(), last: {} };
  }

  /** The `sequence_epoch` to send with every request carrying numbers. */
  get epoch(): string {
    return this.#state.epoch;
  }

  /** The next number of the SIM slot's counter (call once per SMS from an allowed sender, in arrival order). */
  next(simSlot: number | null | undefined): number {
    const key = slotKey(simSlot);
    const n = (this.#state.last[key] ?? 0) + 1;
    this.#state.last[key] = n;
    return n;
  }

  /** What to persist (e.g. as JSON) after each `next()`. */
  state(): SmsSequenceState {
    return { epoch: this.#state.epoch, last: { ...this.#state.last } };
  }
}

/** Screened numbers as `screened_sequences` ranges: consecutive numbers of a slot joined. */
export function screenedRanges(items: ReadonlyArray<{ simSlot: number | null | undefined; sequence: number }>): Array<{ sim_slot: number | null; from: number; to: number }> {
  const bySlot = new Map<number | null, number[]>();
  for (const i of items) {
    const slot = i.simSlot ?? null;
    bySlot.set(slot, [...(bySlot.get(slot) ?? []), i.sequence]);
  }
  const out: Array<{ sim_slot: number | null; from: number; to: number }> = [];
  for (const [slot, numbers] of bySlot) {
    const sorted = [...new Set(numbers)].sort((a, b) => a - b);
    for (const n of sorted) {
      const last = out.at(-1);
      if (last && last.sim_slot === slot && last.to + 1 === n) last.to = n;
      else out.push({ sim_slot: slot, from: n, to: n });
    }
  }
  return out;
}
