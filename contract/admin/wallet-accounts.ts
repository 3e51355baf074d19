import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, MONEY_PATTERN, ok, timestampSchema } from '../common/index.ts';
import { walletAccountTypes } from '../vocabulary.ts';
import { adminMeta, adminRouterOptions, idParam } from './shared.ts';

const c = initContract();

const limitSchema = z
  .string()
  .regex(MONEY_PATTERN, 'Must be an amount with exactly two decimals, e.g. "25000.00"')
  .refine((s) => /[1-9]/.test(s), 'Must be greater than zero');

const fields = {
  number: z
    .string()
    .trim()
    .regex(/^\+?[0-9][0-9 -]{3,30}$/, 'Must be the wallet number as customers type it: digits, optionally with +, spaces or dashes')
    .max(32)
    .describe('The wallet number customers send money to (`01712345678`), as the checkout shows it.'),
  account_type: z
    .enum(walletAccountTypes)
    .describe('What the customer does to pay it: `personal` (Send Money), `agent` (Cash Out), `merchant` (Payment).'),
  label: z.string().trim().min(1).max(100).nullable().describe('A name for operators (`Shop bKash 2`); never shown to customers.'),
  daily_limit: limitSchema
    .nullable()
    .describe("At most this much (amounts to send) is assigned to it per day of the brand's time zone; then the next account takes payments. Null: no limit."),
  enabled: z.boolean().describe('A disabled account is offered to no new payment; payments already shown it keep it.'),
  device_id: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe("The brand's phone that receives this account's SMS. Only an SMS forwarded by that phone proves a payment into it. Null: any phone of the brand."),
  sim_slot: z
    .number()
    .int()
    .min(0)
    .max(7)
    .nullable()
    .describe("The SIM slot (0-based) of that phone holding the account's SIM: only an SMS the phone says arrived on that slot (or on an unknown slot) proves a payment into it, and the slot has its own balance chain. Needs `device_id`. Null: any slot."),
};

export const walletAccountSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    gateway: z.string().describe('Code of the manual gateway the account is on.'),
    number: z.string(),
    account_type: fields.account_type,
    label: z.string().nullable(),
    daily_limit: amountSchema.nullable(),
    used_today: amountSchema.describe("Amounts to send of its transactions started today (brand's time zone), open or completed."),
    enabled: z.boolean(),
    device_id: z.number().int().nullable(),
    sim_slot: z.number().int().nullable(),
    last_assigned_at: timestampSchema.nullable().describe('When a checkout last showed it (the round robin takes the least recent first).'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'WalletAccount' });

export const createWalletAccountBodySchema = z
  .strictObject({
    gateway: z.string().min(1).max(50).describe('Code of a manual gateway (`bkash`).'),
    number: fields.number,
    account_type: fields.account_type.default('personal'),
    label: fields.label.optional(),
    daily_limit: fields.daily_limit.optional(),
    enabled: fields.enabled.default(true),
    device_id: fields.device_id.optional(),
    sim_slot: fields.sim_slot.optional(),
  })
  .meta({ id: 'AdminCreateWalletAccountRequest' });

export const updateWalletAccountBodySchema = z
  .strictObject({
    number: fields.number.optional(),
    account_type: fields.account_type.optional(),
    label: fields.label.optional(),
    daily_limit: fields.daily_limit.optional(),
    enabled: fields.enabled.optional(),
    device_id: fields.device_id.optional(),
    sim_slot: fields.sim_slot.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'Give at least one field to change')
  .meta({ id: 'AdminUpdateWalletAccountRequest' });

const brandPath = z.object({ brand_id: idParam('brand') });
const accountPath = z.object({ account_id: idParam('wallet account') });

const TAG = 'Wallet accounts';

export const adminWalletAccountsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/brands/:brand_id/wallet-accounts',
      summary: "A brand's wallet accounts",
      description: "The brand's own receiving accounts on the manual gateways, in gateway order, with today's use against each daily limit.",
      pathParams: brandPath,
      query: z.object({ gateway: z.string().max(50).optional().describe('Only accounts on this gateway (code).') }),
      responses: { 200: ok(z.array(walletAccountSchema)) },
      metadata: adminMeta(TAG, ['BRAND_NOT_FOUND']),
    },
    create: {
      method: 'POST',
      path: '/brands/:brand_id/wallet-accounts',
      summary: 'Add a wallet account',
      description: [
        "Adds a receiving account to a manual gateway for this brand. From then on the brand's checkout shows its own accounts on that gateway (never the gateway's global number), chosen per payment by round robin among the enabled accounts with room in their daily limit.",
        'Binding it to a phone (`device_id`) and SIM slot (`sim_slot`) makes only SMS from that phone and slot prove payments into it (docs/matching.md).',
        'A number the brand already has on the gateway is `CONFLICT`; a phone of another brand is `VALIDATION_ERROR` (field `device_id`); a revoked phone `DEVICE_REVOKED`. Recorded in the audit log.',
      ].join(' '),
      pathParams: brandPath,
      body: createWalletAccountBodySchema,
      responses: { 201: ok(walletAccountSchema) },
      metadata: adminMeta(TAG, ['BRAND_NOT_FOUND', 'CONFLICT', 'DEVICE_REVOKED']),
    },
    get: {
      method: 'GET',
      path: '/wallet-accounts/:account_id',
      summary: 'One wallet account',
      description: "One of the brand's wallet accounts, with today's use against its daily limit.",
      pathParams: accountPath,
      responses: { 200: ok(walletAccountSchema) },
      metadata: adminMeta(TAG, ['WALLET_ACCOUNT_NOT_FOUND']),
    },
    update: {
      method: 'PATCH',
      path: '/wallet-accounts/:account_id',
      summary: 'Change a wallet account',
      description:
        'Changes the given fields only. Moving it to another phone forgets its SIM slot unless one is given. Payments already shown the account keep it (their customers may have paid into it). Recorded in the audit log.',
      pathParams: accountPath,
      body: updateWalletAccountBodySchema,
      responses: { 200: ok(walletAccountSchema) },
      metadata: adminMeta(TAG, ['WALLET_ACCOUNT_NOT_FOUND', 'CONFLICT', 'DEVICE_REVOKED']),
    },
    delete: {
      method: 'DELETE',
      path: '/wallet-accounts/:account_id',
      summary: 'Delete a wallet account',
      description: 'Deletes an account no payment was made into; one with payments is `CONFLICT` (disable it instead: its payments name it). Recorded in the audit log.',
      pathParams: accountPath,
      body: z.strictObject({}).optional().describe('No body.'),
      responses: { 204: c.noBody() },
      metadata: adminMeta(TAG, ['WALLET_ACCOUNT_NOT_FOUND', 'CONFLICT']),
    },
  },
  adminRouterOptions,
);
