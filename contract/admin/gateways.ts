import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, currencySchema, MONEY_PATTERN, nameText, ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, brandFilter } from './shared.ts';
import { feePayers, gatewayTypes, modes, smsDirections } from '../vocabulary.ts';

const c = initContract();

const money = z.string().regex(MONEY_PATTERN, 'Must be a decimal string with exactly two decimal places, e.g. "1250.00"');
const positiveMoney = money.refine((s) => /[1-9]/.test(s), 'Must be greater than zero');

export const smsTemplateSchema = z
  .strictObject({
    pattern: z
      .string()
      .min(1)
      .max(1000)
      .describe(
        'JavaScript regular expression with the named groups `amount` and (money in) `trx_id`, optionally `sender_number`, `balance`, `fee`, `time` (docs/matching.md). Checked when saved: it must compile, must not nest unbounded quantifiers, and a money-in template must not match any wallet\'s own money-out messages (400 naming the template).',
      ),
    flags: z.string().max(4).default('').describe('Any of `i`, `m`, `s`, `u`. Default none.'),
    direction: z
      .enum(smsDirections)
      .default('in')
      .describe('`in` (default): a credit that may pay a payment. `out`: the wallet\'s Send Money, Cash Out, Payment, bill pay or recharge message, recognised and never matched: it only feeds the balance chain (docs/matching.md).'),
    kind: z.string().regex(/^[a-z0-9_]{1,40}$/, 'Must be 1-40 characters of a-z 0-9 _').optional().describe("What the message reports: `received`, `cash_in`, `send_money`, ... A money-in template of kind `cashback` reads money that is never a customer's payment: balance chain evidence only, like a debit."),
  })
  .meta({ id: 'AdminSmsTemplate' });

/** Every field an admin sets on a gateway. */
const gatewayFields = {
  name: nameText(100).describe('Shown to paying customers.'),
  type: z.enum(gatewayTypes).describe('`manual`: the customer pays outside and enters the gateway transaction id, verified by SMS. `automatic`: redirect and callback (the sandbox).'),
  methods: z.array(z.string().regex(/^[a-z0-9_]{1,50}$/, 'Must be 1-50 characters of a-z 0-9 _')).min(1).max(20).describe('Payment methods; the first is the default.'),
  currencies: z.array(currencySchema).min(1).max(20).describe('Currencies it charges in. The first is the one other currencies are converted into.'),
  min_amount: positiveMoney.describe('Smallest amount it takes (in its charged currency). Default "0.01".'),
  max_amount: positiveMoney.nullable().describe('Largest amount, or null for no maximum (`Amount exceeds maximum` above it).'),
  review_above: positiveMoney
    .nullable()
    .describe('SMS matching: an amount above it always goes to review, even when the SMS proves the payment with certainty; null for no threshold (default).'),
  fee_percent: z
    .string()
    .regex(/^(?:0|[1-9]\d?)(?:\.\d{1,4})?$/, 'Must be a percentage from 0 to 99.9999 with at most 4 decimal places')
    .describe('Percent fee, as a decimal string ("1.85" for 1.85 %).'),
  fee_fixed: money.describe('Fixed fee added to the percent fee.'),
  fee_payer: z
    .enum(feePayers)
    .describe('Who pays the fee. `merchant`: the customer sends the amount and the fee is not shown to them. `customer`: the checkout shows one number, amount + fee, and the wallet SMS must carry exactly that.'),
  receiving_account: z.string().trim().min(1).max(100).nullable().describe('Manual gateways: the account number customers send money to.'),
  instructions: z.string().trim().min(1).max(2000).nullable().describe('Shown on the checkout page.'),
  enabled: z.boolean().describe('Disabled gateways are not offered and refuse new transactions.'),
  sms_senders: z.array(z.string().trim().min(1).max(20)).max(20).describe('Official SMS sender ids (`bKash`, `16216`); SMS from anyone else never verify a payment.'),
  sms_templates: z.array(smsTemplateSchema).max(20).describe('Templates tried in order on SMS from the official senders.'),
  sort_order: z.number().int().min(-1000).max(1000).describe('Display order on the checkout page (ascending).'),
  preset: z
    .string()
    .max(50)
    .describe('A wallet preset code (`GET /gateway-presets`): its official senders and templates are written first; `sms_senders` and `sms_templates` given too come after them.'),
};

export const createGatewayBodySchema = z
  .strictObject({
    code: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'Must be 1-50 characters of a-z 0-9 _ -, starting with a letter or digit').describe('Unique code, used in URLs and payments (`bkash`).'),
    name: gatewayFields.name,
    type: gatewayFields.type,
    methods: gatewayFields.methods,
    currencies: gatewayFields.currencies,
    min_amount: gatewayFields.min_amount.default('0.01'),
    max_amount: gatewayFields.max_amount.default(null),
    review_above: gatewayFields.review_above.default(null),
    fee_percent: gatewayFields.fee_percent.default('0').describe('Default "0".'),
    fee_fixed: gatewayFields.fee_fixed.default('0.00').describe('Default "0.00".'),
    fee_payer: gatewayFields.fee_payer.default('merchant').describe('Default `merchant`.'),
    receiving_account: gatewayFields.receiving_account.default(null),
    instructions: gatewayFields.instructions.default(null),
    enabled: gatewayFields.enabled.default(true).describe('Default true.'),
    sms_senders: gatewayFields.sms_senders.default([]),
    sms_templates: gatewayFields.sms_templates.default([]),
    sort_order: gatewayFields.sort_order.default(0),
    preset: gatewayFields.preset.optional(),
  })
  .meta({ id: 'AdminCreateGatewayRequest' });

/**
 * The gateway fields as the gateways service takes them (the admin routes, the
 * demo seed, the sandbox gateway): the create request with its defaults, and a
 * patch of any of its fields but the code.
 */
export const gatewayInputSchema = createGatewayBodySchema;
export const gatewayPatchSchema = createGatewayBodySchema.omit({ code: true }).partial();

export const updateGatewayBodySchema = z
  .strictObject({
    ...(Object.fromEntries(Object.entries(gatewayFields).map(([k, s]) => [k, s.optional()])) as {
      [K in keyof typeof gatewayFields]: z.ZodOptional<(typeof gatewayFields)[K]>;
    }),
    confirm_regressions: z
      .boolean()
      .optional()
      .describe(
        'Save templates or senders even though they stop parsing stored SMS that parse today (otherwise 409 `TEMPLATE_REGRESSION`). Recorded in the audit log with the number of messages.',
      ),
  })
  .refine((b) => Object.keys(b).some((k) => k !== 'confirm_regressions'), 'Give at least one field to change')
  .meta({ id: 'AdminUpdateGatewayRequest' });

export const adminGatewaySchema = z
  .object({
    id: z.number().int(),
    code: z.string(),
    name: z.string(),
    type: z.enum(gatewayTypes),
    methods: z.array(z.string()),
    currencies: z.array(z.string()),
    min_amount: amountSchema,
    max_amount: amountSchema.nullable(),
    review_above: amountSchema.nullable().describe('SMS matching: amounts above it always go to review.'),
    fee_percent: z.string().describe('Percent, e.g. "1.85".'),
    fee_fixed: amountSchema,
    fee_payer: z.enum(feePayers).describe('Who pays the fee: `customer` sends amount + fee.'),
    receiving_account: z.string().nullable(),
    instructions: z.string().nullable(),
    enabled: z.boolean(),
    sms_senders: z.array(z.string()),
    sms_templates: z.array(z.object({ pattern: z.string(), flags: z.string(), direction: z.enum(smsDirections), kind: z.string().nullable() })),
    sort_order: z.number().int(),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminGateway' });

export const gatewayPresetSchema = z
  .object({
    code: z.string().describe('Preset code, given as `preset` when creating or updating a gateway.'),
    name: z.string(),
    senders: z.array(z.string()).describe('Official SMS sender ids.'),
    templates: z.array(
      z.object({
        pattern: z.string(),
        flags: z.string(),
        direction: z.enum(smsDirections),
        kind: z.string(),
        verified: z.boolean().describe('False: no public source showed this wording; a conservative guess.'),
      }),
    ),
  })
  .meta({ id: 'AdminGatewayPreset' });

const parseViewSchema = z
  .object({
    direction: z.enum(smsDirections),
    kind: z.string().nullable(),
    amount: amountSchema,
    trx_id: z.string().nullable(),
    sender_number: z.string().nullable(),
    balance: z.string().nullable(),
    fee: z.string().nullable(),
    template_index: z.number().int().describe('Index of the template that read it.'),
  })
  .meta({ id: 'AdminTemplateParse' });

export const sampleMissSchema = z
  .object({
    code: z
      .enum(['too_long', 'sender_not_official', 'no_templates', 'no_template_matched', 'amount_unreadable', 'trx_id_missing'])
      .describe(
        '`sender_not_official`: the sender is none of the official ones (its SMS are never read); `no_templates`: the gateway has none; `no_template_matched`: no pattern matches the text; `amount_unreadable`: a pattern matched but its `amount` is no valid amount; `trx_id_missing`: a money-in pattern matched but read no `trx_id`; `too_long`: longer than any SMS.',
      ),
    template_index: z.number().int().nullable().describe('The template that came closest (its pattern matched, a group it needs did not read); null otherwise.'),
    message: z.string().describe('The same, in words for a person.'),
  })
  .meta({ id: 'AdminTemplateSampleMiss' });

const parseChange = z.enum(['unchanged', 'newly_parsed', 'stops_parsing', 'changed']);
const paymentEffectSchema = z.object({ transaction_id: z.number().int(), brand_id: z.number().int(), sms_record_id: z.number().int() });

export const templateEvaluationBodySchema = z
  .strictObject({
    sms_templates: gatewayFields.sms_templates.optional().describe('Proposed templates (replace the current ones). Absent: the current ones.'),
    sms_senders: gatewayFields.sms_senders.optional().describe('Proposed official senders. Absent: the current ones.'),
    preset: gatewayFields.preset.optional().describe('Evaluate a wallet preset (its senders and templates, then any given).'),
    days: z.number().int().min(1).max(30).optional().describe('Stored SMS of the last N days (default 7, at most 30).'),
    limit: z.number().int().min(1).max(5000).optional().describe('At most this many stored records are read, newest first (default 1000, at most 5000).'),
    samples: z
      .array(z.strictObject({ sender: z.string().trim().min(1).max(64).optional().describe("Default: the gateway's first official sender."), body: z.string().min(1).max(2000) }))
      .max(20)
      .optional()
      .describe('Pasted messages, parsed in memory and never stored.'),
  })
  .meta({ id: 'AdminTemplateEvaluationRequest' });

export const templateEvaluationSchema = z
  .object({
    gateway: z.string(),
    days: z.number().int(),
    limit: z.number().int(),
    since: timestampSchema,
    scanned: z.number().int().describe('Stored records read (all senders).'),
    truncated: z.boolean().describe('True when `limit` cut the window short.'),
    counts: z.object({
      evaluated: z.number().int().describe("Records from the gateway's official senders (current or proposed)."),
      unchanged: z.number().int(),
      newly_parsed: z.number().int(),
      stops_parsing: z.number().int(),
      changed: z.number().int(),
    }),
    messages: z
      .array(
        z.object({
          sms_record_id: z.number().int(),
          brand_id: z.number().int(),
          sms_time: timestampSchema,
          change: parseChange.exclude(['unchanged']),
          changed_fields: z.array(z.string()),
          current: parseViewSchema.nullable(),
          proposed: parseViewSchema.nullable(),
        }),
      )
      .describe('Only the messages read differently, newest first. Bodies are never returned.'),
    samples: z
      .array(
        z.object({
          index: z.number().int().describe('Position of the sample in the request.'),
          change: parseChange,
          changed_fields: z.array(z.string()),
          current: parseViewSchema.nullable().describe('What the saved templates read.'),
          proposed: parseViewSchema.nullable().describe('What the proposed templates read; null: nothing (see `proposed_miss`).'),
          proposed_miss: sampleMissSchema.nullable().describe('Why the proposed templates read nothing; null when they read it.'),
        }),
      )
      .describe('The pasted samples, in request order.'),
    payments: z.object({
      would_complete: z.array(paymentEffectSchema).describe('Open payments the proposed reading would complete under the matching rules and the current one does not.'),
      would_stop_completing: z.array(paymentEffectSchema).describe('Open payments the current reading would complete and the proposed one no longer does.'),
    }),
  })
  .meta({ id: 'AdminTemplateEvaluation' });

export const smsFormatAlarmSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    mode: z.enum(modes),
    gateway: z.string().describe('Code of the gateway whose official sender it is.'),
    sender: z.string().describe('The official sender id as configured.'),
    window_minutes: z.number().int(),
    unparsed: z.number().int().describe('Messages of the recent window no template parsed.'),
    total: z.number().int().describe('Messages of the recent window from this sender.'),
    share: z.string().describe('unparsed / total when raised, e.g. "0.8000".'),
    baseline_share: z.string().describe('The same share over the day before the window.'),
    raised_at: timestampSchema,
    cleared_at: timestampSchema.nullable().describe('When the messages parsed again; null while the episode is open.'),
  })
  .meta({ id: 'AdminSmsFormatAlarm' });

const codePath = z.object({ code: z.string().max(50).describe('Gateway code.') });

export const adminGatewaysContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/gateways',
      summary: 'Create a gateway',
      description:
        'Gateways are global: every enabled gateway is offered to every brand. Templates are validated (`INVALID_SMS_TEMPLATE` naming the template). Recorded in the audit log.',
      body: createGatewayBodySchema,
      responses: { 201: ok(adminGatewaySchema) },
      metadata: adminMeta('Gateways', ['CONFLICT', 'INVALID_SMS_TEMPLATE']),
    },
    presets: {
      method: 'GET',
      path: '/gateway-presets',
      summary: 'List wallet presets',
      description:
        'The wallets known out of the box (bKash, Nagad, Rocket, Upay, Tap, OK Wallet, IBBL mCash, IBBL CellFin, Pathao Pay): official senders and money-in and money-out templates. Give a `preset` code when creating or updating a gateway to use them.',
      responses: { 200: ok(z.array(gatewayPresetSchema)) },
      metadata: adminMeta('Gateways'),
    },
    list: {
      method: 'GET',
      path: '/gateways',
      summary: 'List gateways',
      description: 'In checkout display order, disabled ones included.',
      responses: { 200: ok(z.array(adminGatewaySchema)) },
      metadata: adminMeta('Gateways'),
    },
    get: {
      method: 'GET',
      path: '/gateways/:code',
      summary: 'Get a gateway',
      description: 'One gateway by its code, enabled or not, with its limits, fees, currencies, receiving account, SMS senders and templates.',
      pathParams: codePath,
      responses: { 200: ok(adminGatewaySchema) },
      metadata: adminMeta('Gateways', ['GATEWAY_NOT_FOUND']),
    },
    update: {
      method: 'PATCH',
      path: '/gateways/:code',
      summary: 'Update a gateway',
      description:
        'Changes the given fields only: senders, templates, currencies, limits, fees, enabled. `max_amount` may not go below `min_amount`. Transactions already started keep the amount and fee they were created with. Recorded in the audit log.',
      pathParams: codePath,
      body: updateGatewayBodySchema,
      responses: { 200: ok(adminGatewaySchema) },
      metadata: adminMeta('Gateways', ['GATEWAY_NOT_FOUND', 'INVALID_SMS_TEMPLATE', 'TEMPLATE_REGRESSION']),
    },
    listFormatAlarms: {
      method: 'GET',
      path: '/sms-format-alarms',
      summary: 'List format-change alarms',
      description:
        "An alarm is raised (once per episode) when the share of an official sender's messages to a brand that no template parses rises sharply over the recent window (settings `sms_alarm_window_minutes`, `sms_alarm_min_messages`, `sms_alarm_rise`); the brand also gets a `gateway.sms_unparsed` webhook event. Cleared when the messages parse again. Newest first, at most 200.",
      query: z.object({ brand_id: brandFilter, open: z.enum(['true', 'false']).optional().describe('`true`: open episodes only; `false`: cleared ones only.') }),
      responses: { 200: ok(z.array(smsFormatAlarmSchema)) },
      metadata: adminMeta('Gateways'),
    },
    evaluateTemplates: {
      method: 'POST',
      path: '/gateways/:code/template-evaluations',
      summary: 'Test templates before they go live',
      description:
        "Parses the gateway's stored SMS of the last `days` days (and pasted `samples`) with the current and the proposed templates or preset, and answers what would parse differently and which open payments would complete or stop completing under the matching rules. Reads only the SMS of the brands the caller may see; payer numbers show their last three digits only. Changes nothing; pasted samples are not stored; each evaluation is recorded in the audit log (`gateway.evaluate_templates`).",
      pathParams: codePath,
      // No body evaluates the current configuration over the default window.
      body: templateEvaluationBodySchema.optional(),
      responses: { 200: ok(templateEvaluationSchema) },
      metadata: adminMeta('Gateways', ['GATEWAY_NOT_FOUND', 'INVALID_SMS_TEMPLATE']),
    },
  },
  adminRouterOptions,
);
