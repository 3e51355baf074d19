import { modes, smsRecordStatuses, transactionStatuses, refundStatuses } from '../../../contract/vocabulary.ts';
import { defined, need, oneOf, opt, pageHelp, pageOptions, pageQuery, positiveInt } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const TX_COLUMNS = ['id', 'trx_id', 'brand_id', 'gateway', 'amount', 'currency', 'status', 'gateway_trx_id', 'created_at'];
const SMS_COLUMNS = ['id', 'brand_id', 'device_id', 'sender', 'match_status', 'parsed_amount', 'parsed_trx_id', 'confidence', 'candidate_ids', 'trx_id'];
const REFUND_COLUMNS = ['id', 'brand_id', 'trx_id', 'amount', 'currency', 'status', 'created_at', 'processed_at'];

const dateHelp = '[--from YYYY-MM-DD] [--to YYYY-MM-DD]';

export const paymentCommands: Commands = {
  'transaction:list': {
    summary: 'List transactions of every brand, or one, newest first',
    usage: `[--brand <id>] [--mode live|test] [--status <${transactionStatuses.join('|')}>] [--gateway <code>] [--trx-id <ref>] ${dateHelp} ${pageHelp}`,
    options: { brand: { type: 'string' }, mode: { type: 'string' }, status: { type: 'string' }, gateway: { type: 'string' }, 'trx-id': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const query = defined({
        brand_id: positiveInt(v, 'brand'),
        mode: oneOf(v, 'mode', modes),
        status: oneOf(v, 'status', transactionStatuses),
        gateway: opt(v, 'gateway'),
        trx_id: opt(v, 'trx-id'),
        from: opt(v, 'from'),
        to: opt(v, 'to'),
        ...pageQuery(v),
      });
      const page = await ctx.admin().transactions.list(query);
      return { json: page, text: table(page.data, TX_COLUMNS, page.meta) };
    },
  },
  'transaction:get': {
    summary: 'Show a transaction with the SMS that matched it or could belong to it',
    usage: '--transaction <id>',
    options: { transaction: { type: 'string' } },
    async run(ctx, v) {
      const { sms_records, ...tx } = await ctx.admin().transactions.get(positiveInt(v, 'transaction', true));
      const text = `${block(tx)}\n\nSMS records:\n${table(sms_records, ['id', 'role', 'match_status', 'parsed_amount', 'parsed_trx_id', 'confidence', 'received_at'])}`;
      return { json: { ...tx, sms_records }, text };
    },
  },
  'transaction:verify': {
    summary: 'Complete a transaction by hand (optionally naming the SMS that proves it)',
    usage: '--transaction <id> [--sms-record <id>] [--note <why>] [--accept-amount-difference] [--correct-trx-id]',
    options: {
      transaction: { type: 'string' },
      'sms-record': { type: 'string' },
      note: { type: 'string' },
      'accept-amount-difference': { type: 'boolean' },
      'correct-trx-id': { type: 'boolean' },
    },
    notes: [
      '--accept-amount-difference: the named SMS proves the payment although its amount differs (needs --sms-record and --note).',
      "--correct-trx-id: the customer mistyped the trx id; the claim becomes the named SMS's id, at most a typo away (needs --sms-record and --note).",
    ],
    async run(ctx, v) {
      const id = positiveInt(v, 'transaction', true);
      const tx = await ctx.admin().transactions.verify(
        id,
        defined({
          sms_record_id: positiveInt(v, 'sms-record'),
          note: opt(v, 'note'),
          accept_amount_difference: v['accept-amount-difference'] ? true : undefined,
          correct_trx_id: v['correct-trx-id'] ? true : undefined,
        }),
      );
      return { json: tx, text: block(tx) };
    },
  },
  'transaction:reject': {
    summary: 'Fail a transaction by hand (the customer may pay again)',
    usage: '--transaction <id> --reason <why>',
    options: { transaction: { type: 'string' }, reason: { type: 'string' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'transaction', true);
      const tx = await ctx.admin().transactions.reject(id, { reason: need(v, 'reason') });
      return { json: tx, text: block(tx) };
    },
  },
  'sms:list': {
    summary: 'List forwarded SMS records with their match status (text only with --include-body)',
    usage: `[--brand <id>] [--mode live|test] [--match-status <${smsRecordStatuses.join('|')}>] [--device <id>] [--needs-review] ${dateHelp} [--include-body] ${pageHelp}`,
    options: {
      brand: { type: 'string' },
      mode: { type: 'string' },
      'match-status': { type: 'string' },
      device: { type: 'string' },
      'needs-review': { type: 'boolean' },
      from: { type: 'string' },
      to: { type: 'string' },
      'include-body': { type: 'boolean' },
      ...pageOptions,
    },
    notes: [
      '--needs-review lists only records waiting for a person (no_candidate, low_confidence, balance_mismatch, not yet resolved).',
      '--include-body decrypts the SMS text (personal data); each such read is recorded in the audit log.',
    ],
    async run(ctx, v) {
      const query = defined({
        brand_id: positiveInt(v, 'brand'),
        mode: oneOf(v, 'mode', modes),
        match_status: oneOf(v, 'match-status', smsRecordStatuses),
        device_id: positiveInt(v, 'device'),
        needs_review: v['needs-review'] ? ('true' as const) : undefined,
        from: opt(v, 'from'),
        to: opt(v, 'to'),
        include: v['include-body'] ? ('body' as const) : undefined,
        ...pageQuery(v),
      });
      const page = await ctx.admin().smsRecords.list(query);
      return { json: page, text: table(page.data, v['include-body'] ? [...SMS_COLUMNS, 'body'] : SMS_COLUMNS, page.meta) };
    },
  },
  'sms:get': {
    summary: 'Show one forwarded SMS record',
    usage: '--sms-record <id> [--include-body]',
    options: { 'sms-record': { type: 'string' }, 'include-body': { type: 'boolean' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'sms-record', true);
      const record = await ctx.admin().smsRecords.get(id, defined({ include: v['include-body'] ? ('body' as const) : undefined }));
      return { json: record, text: block(record) };
    },
  },
  'sms:dismiss': {
    summary: 'Take an SMS record left for review out of the queue (it proves no payment)',
    usage: '--sms-record <id> --reason <why>',
    options: { 'sms-record': { type: 'string' }, reason: { type: 'string' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'sms-record', true);
      const record = await ctx.admin().smsRecords.dismiss(id, { reason: need(v, 'reason') });
      return { json: record, text: block(record) };
    },
  },
  'refund:list': {
    summary: 'List refunds of every brand, or one (manual-gateway refunds wait as pending)',
    usage: `[--brand <id>] [--mode live|test] [--status pending|completed|failed] [--trx-id <ref>] [--transaction <id>] ${dateHelp} ${pageHelp}`,
    options: { brand: { type: 'string' }, mode: { type: 'string' }, status: { type: 'string' }, 'trx-id': { type: 'string' }, transaction: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ...pageOptions },
    async run(ctx, v) {
      const query = defined({
        brand_id: positiveInt(v, 'brand'),
        mode: oneOf(v, 'mode', modes),
        status: oneOf(v, 'status', refundStatuses),
        trx_id: opt(v, 'trx-id'),
        transaction_id: positiveInt(v, 'transaction'),
        from: opt(v, 'from'),
        to: opt(v, 'to'),
        ...pageQuery(v),
      });
      const page = await ctx.admin().refunds.list(query);
      return { json: page, text: table(page.data, REFUND_COLUMNS, page.meta) };
    },
  },
  'refund:get': {
    summary: 'Show one refund',
    usage: '--refund <id>',
    options: { refund: { type: 'string' } },
    async run(ctx, v) {
      const refund = await ctx.admin().refunds.get(positiveInt(v, 'refund', true));
      return { json: refund, text: block(refund) };
    },
  },
  'refund:complete': {
    summary: 'Mark a pending refund as paid out (the merchant gets refund.completed); a manual gateway needs the wallet reference of the payout',
    usage: '--refund <id> [--reference <wallet trx id>] [--note <text>]',
    options: { refund: { type: 'string' }, reference: { type: 'string' }, note: { type: 'string' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'refund', true);
      const reference = opt(v, 'reference');
      const note = opt(v, 'note');
      const refund = await ctx.admin().refunds.complete(id, { ...(reference ? { reference } : {}), ...(note ? { note } : {}) });
      return { json: refund, text: block(refund) };
    },
  },
  'refund:fail': {
    summary: 'Mark a pending refund as failed (the merchant gets refund.failed)',
    usage: '--refund <id> --reason <why>',
    options: { refund: { type: 'string' }, reason: { type: 'string' } },
    async run(ctx, v) {
      const id = positiveInt(v, 'refund', true);
      const refund = await ctx.admin().refunds.fail(id, { reason: need(v, 'reason') });
      return { json: refund, text: block(refund) };
    },
  },
};
