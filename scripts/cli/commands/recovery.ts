import { defined, need, oneOf, opt, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const BACKFILL_COLUMNS = ['id', 'brand_id', 'device_id', 'reason', 'status', 'from', 'to', 'attempts', 'next_attempt_at', 'resent_count'];
const backfillStatuses = ['pending', 'delivered', 'answered', 'failed'] as const;

/** Recovering SMS the phone never forwarded (docs/recovery.md). */
export const recoveryCommands: Commands = {
  'sms:paste': {
    summary: 'Paste a missed SMS by hand: matched like a forwarded one, marked pasted and audited',
    usage: '--device <id> --from <sender> --body <text> [--received-at <ISO time>] [--operator-name <name>]',
    options: { device: { type: 'string' }, from: { type: 'string' }, body: { type: 'string' }, 'received-at': { type: 'string' }, 'operator-name': { type: 'string' } },
    notes: ['The same SMS forwarded later by the phone is stored as a duplicate, never matched twice.'],
    async run(ctx, v) {
      const record = await ctx.admin().recovery.pasteSms(
        defined({
          device_id: positiveInt(v, 'device', true),
          sender: need(v, 'from'),
          body: need(v, 'body'),
          received_at: opt(v, 'received-at') ?? new Date().toISOString(),
          operator_name: opt(v, 'operator-name'),
        }),
      );
      return { json: record, text: block(record, ['id', 'device_id', 'entry', 'entered_by', 'operator_name', 'match_status', 'reason', 'duplicate_of', 'transaction_id', 'trx_id']) };
    },
  },
  'device:backfill': {
    summary: 'Ask a phone to re-send the SMS it received in a window (at most 7 days, not in the future)',
    usage: '--device <id> --from <ISO time> --to <ISO time>',
    options: { device: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } },
    async run(ctx, v) {
      const r = await ctx.admin().recovery.requestBackfill(positiveInt(v, 'device', true), { from: need(v, 'from'), to: need(v, 'to') });
      return { json: r, text: block(r) };
    },
  },
  'backfill:list': {
    summary: 'List backfill requests (--status failed: the ones no phone answered)',
    usage: '[--brand <id>] [--device <id>] [--status pending|delivered|answered|failed]',
    options: { brand: { type: 'string' }, device: { type: 'string' }, status: { type: 'string' } },
    async run(ctx, v) {
      const items = await ctx.admin().recovery.listBackfillRequests(defined({ brand_id: positiveInt(v, 'brand'), device_id: positiveInt(v, 'device'), status: oneOf(v, 'status', backfillStatuses) }));
      return { json: items, text: table(items, BACKFILL_COLUMNS) };
    },
  },
};
