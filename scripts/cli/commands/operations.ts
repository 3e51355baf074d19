import { modes, deliveryStatuses, webhookEventNames } from '../../../contract/vocabulary.ts';
import { UsageError, decimalNumber, defined, need, oneOf, opt, pageHelp, pageOptions, pageQuery, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const DELIVERY_COLUMNS = ['id', 'brand_id', 'event', 'status', 'attempts', 'response_status', 'last_error', 'created_at'];

export const operationCommands: Commands = {
  'delivery:list': {
    summary: 'List webhook deliveries of every brand, or one',
    usage: `[--brand <id>] [--mode live|test] [--status ${deliveryStatuses.join('|')}] [--event <name>] [--from YYYY-MM-DD] [--to YYYY-MM-DD] ${pageHelp}`,
    options: { brand: { type: 'string' }, mode: { type: 'string' }, status: { type: 'string' }, event: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const query = defined({
        brand_id: positiveInt(v, 'brand'),
        mode: oneOf(v, 'mode', modes),
        status: oneOf(v, 'status', deliveryStatuses),
        event: oneOf(v, 'event', webhookEventNames),
        from: opt(v, 'from'),
        to: opt(v, 'to'),
        ...pageQuery(v),
      });
      const page = await ctx.admin().webhookDeliveries.list(query);
      return { json: page, text: table(page.data, DELIVERY_COLUMNS, page.meta) };
    },
  },
  'delivery:get': {
    summary: 'Show a webhook delivery with every attempt',
    usage: '--delivery <id>',
    options: { delivery: { type: 'string' } },
    async run(ctx, v) {
      const { attempt_log, payload, ...delivery } = await ctx.admin().webhookDeliveries.get(positiveInt(v, 'delivery', true));
      const text = `${block(delivery)}\n\nAttempts:\n${table(attempt_log, ['attempt', 'outcome', 'requested_at', 'duration_ms', 'response_status', 'error_kind', 'error'])}`;
      return { json: { ...delivery, payload, attempt_log }, text };
    },
  },
  'delivery:replay': {
    summary: 'Replay one dead-letter delivery (same id and event id; attempts keep counting)',
    usage: '--delivery <id>',
    options: { delivery: { type: 'string' } },
    async run(ctx, v) {
      const delivery = await ctx.admin().webhookDeliveries.replay(positiveInt(v, 'delivery', true));
      const { payload: _payload, ...shown } = delivery;
      return { json: delivery, text: block(shown) };
    },
  },
  'delivery:replay-dead': {
    summary: 'Replay every dead letter since a time (of every brand, or one)',
    usage: '--since <ISO time, e.g. 2026-11-21T00:00:00Z> [--brand <id>]',
    options: { since: { type: 'string' }, brand: { type: 'string' } },
    async run(ctx, v) {
      const result = await ctx.admin().webhookDeliveries.replayDeadLetters(defined({ since: need(v, 'since'), brand_id: positiveInt(v, 'brand') }));
      return { json: result, text: `replayed ${result.replayed}; left ${result.skipped_disabled} whose endpoint is disabled (enable it first)` };
    },
  },
  'webhooks:test': {
    summary: "Send a signed test event to a brand's webhook endpoint (delivered and logged like any other; nothing else changes)",
    usage: `--brand <id> --event <${webhookEventNames.join('|')}> [--mode test|live]`,
    options: { brand: { type: 'string' }, event: { type: 'string' }, mode: { type: 'string' } },
    async run(ctx, v) {
      const brandId = positiveInt(v, 'brand', true);
      const event = oneOf(v, 'event', webhookEventNames);
      if (!event) throw new UsageError(`--event must be one of ${webhookEventNames.join(', ')}`);
      const delivery = await ctx.admin().webhookDeliveries.sendTest(defined({ brand_id: brandId, event, mode: oneOf(v, 'mode', ['test', 'live'] as const) }));
      const { payload: _payload, ...shown } = delivery;
      return { json: delivery, text: block(shown) };
    },
  },
  'settings:get': {
    summary: 'Show the service-wide settings',
    usage: '',
    options: {},
    async run(ctx) {
      const settings = await ctx.admin().settings.get();
      return { json: settings, text: block(settings) };
    },
  },
  'settings:set': {
    summary: 'Change settings (a brand’s time zone: brand:update --timezone)',
    usage: '[--intent-expiry-minutes <n>] [--match-threshold <0..1>] [--match-window-minutes <n>] [--device-offline-minutes <n>]',
    options: {
      'intent-expiry-minutes': { type: 'string' },
      'match-threshold': { type: 'string' },
      'match-window-minutes': { type: 'string' },
      'device-offline-minutes': { type: 'string' },
    },
    async run(ctx, v) {
      const body = defined({
        intent_expiry_minutes: positiveInt(v, 'intent-expiry-minutes'),
        match_threshold: decimalNumber(v, 'match-threshold'),
        match_window_minutes: positiveInt(v, 'match-window-minutes'),
        device_offline_minutes: positiveInt(v, 'device-offline-minutes'),
      });
      if (Object.keys(body).length === 0) throw new UsageError('give at least one setting to change');
      const settings = await ctx.admin().settings.update(body);
      return { json: settings, text: block(settings) };
    },
  },
  'audit:list': {
    summary: 'Show the audit log of admin changes, newest first',
    usage: `[--brand <id>] [--action <e.g. transaction.verify>] [--target-type <e.g. refund>] [--target-id <id>] ${pageHelp}`,
    options: { brand: { type: 'string' }, action: { type: 'string' }, 'target-type': { type: 'string' }, 'target-id': { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const query = defined({ brand_id: positiveInt(v, 'brand'), action: opt(v, 'action'), target_type: opt(v, 'target-type'), target_id: opt(v, 'target-id'), ...pageQuery(v) });
      const page = await ctx.admin().auditLog.list(query);
      return { json: page, text: table(page.data, ['id', 'created_at', 'actor', 'action', 'target_type', 'target_id', 'brand_id', 'before', 'after'], page.meta) };
    },
  },
};
