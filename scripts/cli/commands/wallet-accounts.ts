import { walletAccountTypes } from '../../../contract/vocabulary.ts';
import { UsageError, defined, need, oneOf, opt, positiveInt, toggle, type Options, type Values } from '../args.ts';
import type { Commands } from '../command.ts';
import { block, table } from '../output.ts';

const ACCOUNT_COLUMNS = ['id', 'gateway', 'number', 'account_type', 'label', 'enabled', 'daily_limit', 'used_today', 'device_id', 'sim_slot', 'last_assigned_at'];

const fieldOptions: Options = {
  number: { type: 'string' },
  type: { type: 'string' },
  label: { type: 'string' },
  'daily-limit': { type: 'string' },
  device: { type: 'string' },
  sim: { type: 'string' },
};

const fieldUsage = `[--type ${walletAccountTypes.join('|')}] [--label <text>|none] [--daily-limit 25000.00|none]
      [--device <phone id>|none] [--sim <slot 0-7>|none]`;

const notes = [
  "A brand's own receiving accounts on a manual gateway: its checkout shows one of them per payment (round robin among the enabled accounts with room in their daily limit; the same one for the whole payment).",
  '--device binds the account to one of the brand\'s phones: only SMS forwarded by it prove payments into the account; --sim narrows that to the SIM slot (0 is the first SIM) and needs --device.',
  'The number, the daily limit and the rest are checked by the API (VALIDATION_ERROR with the field); a number the brand already has on the gateway is CONFLICT.',
];

/** `none` clears a nullable field; anything else is sent as given. */
const nullable = (v: Values, name: string): string | null | undefined => {
  const value = opt(v, name);
  return value === undefined ? undefined : value === 'none' ? null : value;
};

const nullableId = (v: Values, name: string): number | null | undefined => (opt(v, name) === 'none' ? null : positiveInt(v, name));

function simSlot(v: Values): number | null | undefined {
  const raw = opt(v, 'sim');
  if (raw === undefined) return undefined;
  if (raw === 'none') return null;
  if (!/^[0-9]$/.test(raw)) throw new UsageError('--sim must be a SIM slot number (0 is the first SIM) or none');
  return Number(raw);
}

/** The account fields given on the command line (shared by add and update). */
function accountFields(v: Values) {
  return defined({
    number: opt(v, 'number'),
    account_type: oneOf(v, 'type', walletAccountTypes),
    label: nullable(v, 'label'),
    daily_limit: nullable(v, 'daily-limit'),
    device_id: nullableId(v, 'device'),
    sim_slot: simSlot(v),
  });
}

export const walletAccountCommands: Commands = {
  'accounts:list': {
    summary: "List a brand's wallet accounts with today's use against their daily limit",
    usage: '--brand <id> [--gateway <code>]',
    options: { brand: { type: 'string' }, gateway: { type: 'string' } },
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const accounts = await ctx.admin().walletAccounts.list(brand, defined({ gateway: opt(v, 'gateway') }));
      return { json: accounts, text: accounts.length ? table(accounts, ACCOUNT_COLUMNS) : 'No wallet account: the checkout shows the gateway\'s own receiving account.' };
    },
  },
  'accounts:add': {
    summary: 'Add a wallet account (a receiving number) to a manual gateway for a brand',
    usage: `--brand <id> --gateway <code> --number <wallet number> ${fieldUsage} [--disabled]`,
    options: { brand: { type: 'string' }, gateway: { type: 'string' }, ...fieldOptions, disabled: { type: 'boolean' } },
    notes: [...notes, 'Example: accounts:add --brand 1 --gateway bkash --number 01712345678 --type personal --label "Shop bKash 2" --daily-limit 25000.00 --device 3 --sim 1'],
    async run(ctx, v) {
      const brand = positiveInt(v, 'brand', true);
      const gateway = need(v, 'gateway');
      const number = need(v, 'number');
      const fields = accountFields(v);
      const account = await ctx.admin().walletAccounts.create(brand, { ...fields, gateway, number, ...(v.disabled === true ? { enabled: false } : {}) });
      return { json: account, text: block(account) };
    },
  },
  'accounts:update': {
    summary: 'Change a wallet account: number, type, label, daily limit, phone and SIM, enabled',
    usage: `--account <id> [--number <wallet number>] ${fieldUsage} [--enable|--disable]`,
    options: { account: { type: 'string' }, ...fieldOptions, enable: { type: 'boolean' }, disable: { type: 'boolean' } },
    notes: [...notes, 'Moving the account to another phone forgets its SIM slot unless --sim is given; --device none unbinds it (any phone of the brand).'],
    async run(ctx, v) {
      const account = positiveInt(v, 'account', true);
      const body = defined({ ...accountFields(v), enabled: toggle(v, 'enable', 'disable') });
      if (Object.keys(body).length === 0) throw new UsageError('give at least one field to change');
      const updated = await ctx.admin().walletAccounts.update(account, body);
      return { json: updated, text: block(updated) };
    },
  },
  'accounts:remove': {
    summary: 'Delete a wallet account nothing was paid into (otherwise disable it)',
    usage: '--account <id>',
    options: { account: { type: 'string' } },
    async run(ctx, v) {
      const account = positiveInt(v, 'account', true);
      await ctx.admin().walletAccounts.delete(account);
      return { json: { deleted: true, id: account }, text: `deleted wallet account ${account}` };
    },
  },
};
