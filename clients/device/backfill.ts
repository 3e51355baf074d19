/**
 * Backfill commands: the service asks the phone to re-send the SMS of a time
 * window it may have missed (app killed, phone offline, a message in a spam
 * folder). The app polls its open commands (on start, after every push
 * notification, periodically); for each backfill it re-forwards, through the
 * ordinary `smsMessages.forward` with the messages' original
 * `device_message_id`s, the SMS of the window that the filter rules allow, then
 * reports how many. Messages already stored are answered as they are, so
 * re-sending too much is harmless.
 *
 * A `sequence_gap` command (`sequences` set) names the sequence numbers the
 * service is missing (see sequence.ts): re-forward exactly the SMS numbered so
 * (with their `sequence`, `sim_slot`, the `sequence_epoch` and the original
 * `device_message_id`), and report in `screened_sequences` any of them the
 * filter rules screened out on the phone.
 */

export interface BackfillWindow {
  /** Command id. */
  id: number;
  from: Date;
  to: Date;
  reason: 'manual' | 'offline' | 'heartbeat_gap' | 'balance_chain_break' | 'payment_submitted' | 'sequence_gap' | (string & {});
  /**
   * Re-send only SMS of these senders (compare them as the filter rules do:
   * `sameSender`); null: every sender the filter rules allow. A customer's
   * submission (`payment_submitted`) asks for its gateway's official senders.
   */
  senders: string[] | null;
  /** For `sequence_gap`: the counter and the numbers to re-forward (then `from`/`to` only bound when they arrived). */
  sequences?: { simSlot: number | null; epoch: string; numbers: number[] };
}

/** What the helper needs of the device client: its `commands` namespace. */
export interface CommandsApi {
  commands: {
    list(): Promise<
      Array<{
        id: number; type: 'backfill_sms'; from: string; to: string; reason: BackfillWindow['reason']; senders?: string[] | null;
        sequences?: { sim_slot: number | null; sequence_epoch: string; numbers: number[] };
      }>
    >;
    complete(commandId: number | string, body: { resent_count: number }): Promise<unknown>;
  };
}

/**
 * Fetches the open backfill commands and answers each: `onBackfillRequest`
 * re-sends the window and returns how many SMS it re-sent. A callback that
 * throws leaves its command open (the service asks again later) and the
 * error is rethrown after the other commands were answered. Returns the
 * windows answered.
 */
export async function answerBackfillRequests(device: CommandsApi, onBackfillRequest: (window: BackfillWindow) => Promise<number>): Promise<BackfillWindow[]> {
  const answered: BackfillWindow[] = [];
  let firstError: unknown = null;
  for (const c of await device.commands.list()) {
    if (c.type !== 'backfill_sms') continue;
    // `senders` is absent from servers older than the sender filter: every allowed sender then.
    const window: BackfillWindow = { id: c.id, from: new Date(c.from), to: new Date(c.to), reason: c.reason, senders: c.senders ?? null };
    if (c.sequences) window.sequences = { simSlot: c.sequences.sim_slot, epoch: c.sequences.sequence_epoch, numbers: [...c.sequences.numbers] };
    try {
      const resent = await onBackfillRequest(window);
      await device.commands.complete(c.id, { resent_count: resent });
      answered.push(window);
    } catch (err) {
      firstError ??= err;
    }
  }
  if (firstError !== null) throw firstError;
  return answered;
}
