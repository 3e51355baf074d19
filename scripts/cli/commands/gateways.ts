import { feePayers, gatewayTypes } from '../../../contract/vocabulary.ts';
import { GATEWAY_PRESETS } from '../../../server/domain/sms/wording.ts';
import { UsageError, defined, list, need, oneOf, opt, positiveInt, toggle, type Options, type Values } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const GATEWAY_COLUMNS = ['code', 'name', 'type', 'enabled', 'currencies', 'min_amount', 'max_amount', 'fee_percent', 'fee_fixed', 'fee_payer', 'sms_senders'];
const presets = GATEWAY_PRESETS.map((p) => p.code);

const gatewayOptions: Options = {
  name: { type: 'string' },
  type: { type: 'string' },
  methods: { type: 'string' },
  currencies: { type: 'string' },
  'min-amount': { type: 'string' },
  'max-amount': { type: 'string' },
  'fee-percent': { type: 'string' },
  'fee-fixed': { type: 'string' },
  'fee-payer': { type: 'string' },
  account: { type: 'string' },
  instructions: { type: 'string' },
  senders: { type: 'string' },
  template: { type: 'string', multiple: true },
  'template-flags': { type: 'string' },
  'sms-preset': { type: 'string' },
  enable: { type: 'boolean' },
  disable: { type: 'boolean' },
  'sort-order': { type: 'string' },
};

const gatewayUsage = `[--min-amount 10.00] [--max-amount 25000.00|none]
      [--fee-percent 1.85] [--fee-fixed 0.00] [--fee-payer merchant|customer]
      [--account <receiving account>|none] [--instructions <text>|none]
      [--senders bKash,...] [--template <regex> ...] [--template-flags i] [--sms-preset ${presets.join('|')}]
      [--enable|--disable] [--sort-order <n>]`;

const gatewayNotes = [
  'Amounts are decimal strings with two places ("25000.00"); the fee percent is a decimal string ("1.85").',
  '--fee-payer customer: the customer sends amount + fee, the one number the checkout shows and the SMS must carry; merchant (default): the customer sends the amount.',
  '--template may be repeated; templates need the named groups amount and trx_id (INVALID_SMS_TEMPLATE otherwise).',
  `--sms-preset sets the wallet's official senders and its money-in and money-out templates (${presets.join(', ')}); --senders and --template given too are added after them.`,
];

const nullable = (v: Values, name: string): string | null | undefined => {
  const value = opt(v, name);
  return value === undefined ? undefined : value === 'none' ? null : value;
};

function sortOrder(v: Values): number | undefined {
  const raw = opt(v, 'sort-order');
  if (raw === undefined) return undefined;
  if (!/^-?[0-9]{1,4}$/.test(raw)) throw new UsageError('--sort-order must be a whole number');
  return Number(raw);
}

/** The gateway fields given on the command line (shared by create and update). */
function gatewayFields(v: Values) {
  const preset = oneOf(v, 'sms-preset', presets);
  const patterns = v.template as string[] | undefined;
  const flags = opt(v, 'template-flags');
  if (flags !== undefined && !patterns) throw new UsageError('--template-flags needs --template');
  const templates = patterns ? patterns.map((pattern) => defined({ pattern, flags })) : undefined;
  return defined({
    name: opt(v, 'name'),
    type: oneOf(v, 'type', gatewayTypes),
    methods: list(v, 'methods'),
    currencies: list(v, 'currencies'),
    min_amount: opt(v, 'min-amount'),
    max_amount: nullable(v, 'max-amount'),
    fee_percent: opt(v, 'fee-percent'),
    fee_fixed: opt(v, 'fee-fixed'),
    fee_payer: oneOf(v, 'fee-payer', feePayers),
    receiving_account: nullable(v, 'account'),
    instructions: nullable(v, 'instructions'),
    sms_senders: list(v, 'senders'),
    preset,
    sms_templates: templates,
    enabled: toggle(v, 'enable', 'disable'),
    sort_order: sortOrder(v),
  });
}

export const gatewayCommands: Commands = {
  'gateway:create': {
    summary: 'Create a payment gateway (offered to every brand while enabled)',
    usage: `--code <code> --name <name> --type manual|automatic --methods <m,...> --currencies <C,...>\n      ${gatewayUsage}`,
    options: { code: { type: 'string' }, ...gatewayOptions },
    notes: gatewayNotes,
    async run(ctx, v) {
      const fields = gatewayFields(v);
      const type = oneOf(v, 'type', gatewayTypes);
      if (!type) throw new UsageError('--type is required (manual or automatic)');
      if (!fields.methods) throw new UsageError('--methods is required');
      if (!fields.currencies) throw new UsageError('--currencies is required');
      const gateway = await ctx.admin().gateways.create({ ...fields, code: need(v, 'code'), name: need(v, 'name'), type, methods: fields.methods, currencies: fields.currencies });
      return { json: gateway, text: block(gateway) };
    },
  },
  'gateway:list': {
    summary: 'List gateways in checkout order',
    usage: '',
    options: {},
    async run(ctx) {
      const gateways = await ctx.admin().gateways.list();
      return { json: gateways, text: table(gateways, GATEWAY_COLUMNS) };
    },
  },
  'gateway:get': {
    summary: 'Show one gateway with its templates',
    usage: '--code <code>',
    options: { code: { type: 'string' } },
    async run(ctx, v) {
      const gateway = await ctx.admin().gateways.get(need(v, 'code'));
      return { json: gateway, text: block(gateway) };
    },
  },
  'gateway:update': {
    summary: "Change a gateway's senders, templates, currencies, limits, fees or enabled flag",
    usage: `--code <code> [--name <name>] [--type manual|automatic] [--methods <m,...>] [--currencies <C,...>]\n      ${gatewayUsage}`,
    options: { code: { type: 'string' }, ...gatewayOptions, 'confirm-regressions': { type: 'boolean' } },
    notes: [
      ...gatewayNotes,
      'Templates or senders that stop parsing stored SMS that parse today are refused (TEMPLATE_REGRESSION); try them first with gateway:test-template, and give --confirm-regressions to save anyway (audited).',
    ],
    async run(ctx, v) {
      const code = need(v, 'code');
      const fields = gatewayFields(v);
      if (Object.keys(fields).length === 0) throw new UsageError('give at least one field to change');
      const confirm = v['confirm-regressions'] === true ? { confirm_regressions: true } : {};
      const gateway = await ctx.admin().gateways.update(code, { ...fields, ...confirm });
      return { json: gateway, text: block(gateway) };
    },
  },
  'gateway:test-template': {
    summary: 'Test templates or a preset against pasted samples and the stored SMS of the last days, writing nothing',
    usage: `--code <code> [--template <regex> ...] [--template-flags i] [--senders bKash,...] [--sms-preset ${presets.join('|')}]
      [--sample <message text> ...] [--days 7] [--limit 1000]`,
    options: {
      code: { type: 'string' },
      template: { type: 'string', multiple: true },
      'template-flags': { type: 'string' },
      senders: { type: 'string' },
      'sms-preset': { type: 'string' },
      sample: { type: 'string', multiple: true },
      days: { type: 'string' },
      limit: { type: 'string' },
    },
    notes: [
      'Without --template/--sms-preset the current templates are evaluated (useful with --sample).',
      'Lists the stored messages that would parse differently (newly parsed, stop parsing, read differently) and the open payments that would complete or stop completing. Message texts are never printed.',
    ],
    async run(ctx, v) {
      const { sms_templates, sms_senders, preset } = gatewayFields(v);
      const samples = (v.sample as string[] | undefined)?.map((body) => ({ body }));
      const r = await ctx.admin().gateways.evaluateTemplates(need(v, 'code'), defined({ sms_templates, sms_senders, preset, samples, days: positiveInt(v, 'days'), limit: positiveInt(v, 'limit') }));
      const c = r.counts;
      const lines = [
        `Gateway ${r.gateway}: ${c.evaluated} stored SMS of the last ${r.days} days from its senders${r.truncated ? ` (limit ${r.limit} reached: older ones not read)` : ''}`,
        `unchanged ${c.unchanged}, newly parsed ${c.newly_parsed}, stop parsing ${c.stops_parsing}, read differently ${c.changed}`,
      ];
      const reading = (p: { amount: string; trx_id: string | null; direction: string } | null) => (p ? `${p.direction} ${p.amount} ${p.trx_id ?? '-'}` : 'not parsed');
      if (r.messages.length) {
        lines.push('', table(r.messages.map((m) => ({ sms_record_id: m.sms_record_id, brand_id: m.brand_id, sms_time: m.sms_time, change: m.change, current: reading(m.current), proposed: reading(m.proposed) })), ['sms_record_id', 'brand_id', 'sms_time', 'change', 'current', 'proposed']));
      }
      for (const s of r.samples) lines.push(`sample ${s.index + 1}: ${s.change}: ${reading(s.current)} -> ${reading(s.proposed)}`);
      for (const p of r.payments.would_complete) lines.push(`would complete transaction ${p.transaction_id} (brand ${p.brand_id}, SMS ${p.sms_record_id})`);
      for (const p of r.payments.would_stop_completing) lines.push(`would STOP completing transaction ${p.transaction_id} (brand ${p.brand_id}, SMS ${p.sms_record_id})`);
      return { json: r, text: lines.join('\n') };
    },
  },
  'rate:set': {
    summary: 'Set an exchange rate: 1 <base> = <rate> <quote>',
    usage: '--base <USD> --quote <BDT> --rate <110.25>',
    options: { base: { type: 'string' }, quote: { type: 'string' }, rate: { type: 'string' } },
    async run(ctx, v) {
      const rate = await ctx.admin().exchangeRates.set(need(v, 'base'), need(v, 'quote'), { rate: need(v, 'rate') });
      return { json: rate, text: block(rate) };
    },
  },
  'rate:list': {
    summary: 'List exchange rates',
    usage: '',
    options: {},
    async run(ctx) {
      const rates = await ctx.admin().exchangeRates.list();
      return { json: rates, text: table(rates, ['base', 'quote', 'rate', 'updated_at']) };
    },
  },
  'rate:delete': {
    summary: 'Delete an exchange rate',
    usage: '--base <USD> --quote <BDT>',
    options: { base: { type: 'string' }, quote: { type: 'string' } },
    async run(ctx, v) {
      const rate = await ctx.admin().exchangeRates.delete(need(v, 'base'), need(v, 'quote'));
      return { json: rate, text: `deleted ${rate.base}/${rate.quote} (was ${rate.rate})` };
    },
  },
};
