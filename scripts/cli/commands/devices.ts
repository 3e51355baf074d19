import { modes, devicePresences } from '../../../contract/vocabulary.ts';
import { UsageError, defined, list, need, oneOf, pageHelp, pageOptions, pageQuery, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const DEVICE_COLUMNS = ['id', 'brand_id', 'name', 'presence', 'last_seen_at', 'last_heartbeat_at', 'battery_level', 'app_version'];

export const deviceCommands: Commands = {
  'device:list': {
    summary: 'List paired devices with their presence (online, offline, revoked)',
    usage: `[--brand <id>] [--mode live|test] [--presence online|offline|revoked] ${pageHelp}`,
    options: { brand: { type: 'string' }, mode: { type: 'string' }, presence: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const query = defined({ brand_id: positiveInt(v, 'brand'), mode: oneOf(v, 'mode', modes), presence: oneOf(v, 'presence', devicePresences), ...pageQuery(v) });
      const page = await ctx.admin().devices.list(query);
      return { json: page, text: table(page.data, DEVICE_COLUMNS, page.meta) };
    },
  },
  'device:get': {
    summary: 'Show one device',
    usage: '--device <id>',
    options: { device: { type: 'string' } },
    async run(ctx, v) {
      const device = await ctx.admin().devices.get(positiveInt(v, 'device', true));
      return { json: device, text: block(device) };
    },
  },
  'device:revoke': {
    summary: 'Revoke a device (its tokens stop working; the phone must pair again)',
    usage: '--device <id>',
    options: { device: { type: 'string' } },
    async run(ctx, v) {
      const device = await ctx.admin().devices.revoke(positiveInt(v, 'device', true));
      return { json: device, text: block(device) };
    },
  },
  'pairing-code:create': {
    summary: 'Create a one-time pairing code for a brand (shown once)',
    usage: '--brand <id> [--ttl-minutes <n>] [--mode live|test]   (default 15 minutes, live: a test device verifies only test payments)',
    options: { brand: { type: 'string' }, 'ttl-minutes': { type: 'string' }, mode: { type: 'string' } },
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const ttl = positiveInt(v, 'ttl-minutes');
      const code = await ctx.admin().pairingCodes.create(brand, defined({ ttl_minutes: ttl, mode: oneOf(v, 'mode', modes) }));
      const text = [
        `Pairing code: ${code.code}`,
        `Brand:        ${code.brand_id}`,
        `Mode:         ${code.mode}`,
        `Expires at:   ${code.expires_at}`,
        'Enter it in the companion app once; it cannot be shown again.',
      ].join('\n');
      return { json: code, text };
    },
  },
  'filter-rules:get': {
    summary: "Show a brand's SMS filter rules",
    usage: '--brand <id>',
    options: { brand: { type: 'string' } },
    async run(ctx, v) {
      const rules = await ctx.admin().filterRules.get(positiveInt(v, 'brand', true));
      return { json: rules, text: block(rules) };
    },
  },
  'filter-rules:set': {
    summary: "Change a brand's SMS filter rules (the version goes up when they change)",
    usage: '--brand <id> [--extra-senders a,b] [--positive-keywords a,b] [--negative-keywords a,b] [--check-interval-hours <n>]',
    options: {
      brand: { type: 'string' },
      'extra-senders': { type: 'string' },
      'positive-keywords': { type: 'string' },
      'negative-keywords': { type: 'string' },
      'check-interval-hours': { type: 'string' },
    },
    notes: ['Each list replaces the whole list; "" empties it.'],
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const body = defined({
        extra_senders: list(v, 'extra-senders'),
        positive_keywords: list(v, 'positive-keywords'),
        negative_keywords: list(v, 'negative-keywords'),
        check_interval_hours: positiveInt(v, 'check-interval-hours'),
      });
      if (Object.keys(body).length === 0) throw new UsageError('give at least one rule to change');
      const rules = await ctx.admin().filterRules.update(brand, body);
      return { json: rules, text: block(rules) };
    },
  },
  'outbound-sms:enqueue': {
    summary: "Queue an SMS for a brand's phones (or one device) to send",
    usage: '--brand <id> --phone <number> --message <text> [--device <id>] [--ttl-minutes <n>]',
    options: { brand: { type: 'string' }, phone: { type: 'string' }, message: { type: 'string' }, device: { type: 'string' }, 'ttl-minutes': { type: 'string' } },
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const body = defined({ phone: need(v, 'phone'), message: need(v, 'message'), device_id: positiveInt(v, 'device'), ttl_minutes: positiveInt(v, 'ttl-minutes') });
      const queued = await ctx.admin().outboundSms.enqueue(brand, body);
      return { json: queued, text: block(queued) };
    },
  },
  'notification:send': {
    summary: 'Send a push notification to a device',
    usage: '--device <id> --title <title> --body <text>',
    options: { device: { type: 'string' }, title: { type: 'string' }, body: { type: 'string' } },
    async run(ctx, v) {
      const device = positiveInt(v, 'device', true);
      const sent = await ctx.admin().notifications.send(device, { title: need(v, 'title'), body: need(v, 'body') });
      return { json: sent, text: block(sent) };
    },
  },
};
