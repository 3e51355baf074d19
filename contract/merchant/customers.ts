import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { livemodeSchema, meta, ok, okList, pageMetaSchema, pageQuerySchema, timestampSchema, uuidSchema } from '../common/index.ts';

const c = initContract();

/** A customer with personal data in clear (single lookup). */
export const customerSchema = z
  .object({
    id: z.number().int(),
    uuid: uuidSchema,
    name: z.string().nullable(),
    email: z.string().nullable().describe('Normalised (trimmed, lower-case).'),
    phone: z.string().nullable().describe('E.164.'),
    created_at: timestampSchema,
    livemode: livemodeSchema.describe('Customers are per mode: a test payment never creates or finds a live customer.'),
  })
  .meta({ id: 'Customer' });

/** A customer in a list: contact details masked. */
export const customerListItemSchema = z
  .object({
    id: z.number().int(),
    uuid: uuidSchema,
    name: z.string().nullable(),
    email_masked: z.string().nullable().describe('Masked email, e.g. `j***@example.com`.'),
    phone_masked: z.string().nullable().describe('Masked phone, e.g. `+88017*****678`.'),
    created_at: timestampSchema,
    livemode: livemodeSchema,
  })
  .meta({ id: 'CustomerListItem' });

const details = {
  name: z.string().trim().max(200).nullable().describe('Kept encrypted; null or empty: none.'),
  email: z.string().max(254).nullable().describe('Normalised (trimmed, lower-case) and checked; kept encrypted, found again by a keyed hash. Null: none.'),
  phone: z
    .string()
    .max(32)
    .nullable()
    .describe('E.164 or national (`01712345678`, read as Bangladeshi); stored as E.164, encrypted, found again by a keyed hash. Null: none.'),
};

export const createCustomerBodySchema = z
  .strictObject({ name: details.name.optional(), email: details.email.optional(), phone: details.phone.optional() })
  .meta({ id: 'CreateCustomerRequest' });

export const updateCustomerBodySchema = z
  .strictObject({ name: details.name.optional(), email: details.email.optional(), phone: details.phone.optional() })
  .refine((b) => Object.keys(b).length > 0, 'Give at least one of name, email, phone')
  .meta({ id: 'UpdateCustomerRequest' });

/** Named like the lookup's parameter (one path, one parameter name); changes take the uuid only. */
const customerIdParams = z.object({ identifier: uuidSchema.describe("The customer's `uuid` (from create, list or a lookup); an email or phone is not taken here.") });

const TAKEN = ['CUSTOMER_EMAIL_TAKEN', 'CUSTOMER_PHONE_TAKEN'] as const;

export const customersContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/customers',
      summary: 'List customers',
      description: 'Customers of the calling brand, newest first, with masked email and phone.',
      query: z.strictObject({ ...pageQuerySchema.shape }),
      responses: { 200: okList(customerListItemSchema, pageMetaSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Customers' }),
    },
    get: {
      method: 'GET',
      path: '/customers/:identifier',
      summary: 'Find a customer by uuid, email or phone',
      description:
        "A uuid is the customer's `uuid`; otherwise an identifier containing `@` is looked up as an email, anything else as a phone number (E.164 or national), through keyed hashes of the normalised value. Personal data in clear. `CUSTOMER_NOT_FOUND` when no customer of the calling brand (in the key's mode) matches, or the customer was deleted.",
      pathParams: z.object({ identifier: z.string().describe("The customer's uuid, or a URL-encoded email address or phone number.") }),
      responses: { 200: ok(customerSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Customers', errors: ['CUSTOMER_NOT_FOUND'] }),
    },
    create: {
      method: 'POST',
      path: '/customers',
      summary: 'Create a customer',
      description: [
        'A customer of the calling brand in the key\'s mode, with a name and at least one of email and phone (each checked and normalised: a bad one is `VALIDATION_ERROR` naming the field).',
        'An email the brand already has in this mode is `CUSTOMER_EMAIL_TAKEN`, a phone `CUSTOMER_PHONE_TAKEN` (409, `field` names it; the email is checked first). Test and live customers are separate: a test customer never blocks a live one.',
        'Payments find or create customers by themselves; this is for merchants who keep a customer list. Needs the `write` scope. Honours `Idempotency-Key`.',
        'An API key spelled `op_…` (the OwnPay dialect) reaches the OwnPay-shaped create on the same path instead.',
      ].join(' '),
      body: createCustomerBodySchema,
      responses: { 201: ok(customerSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Customers', idempotent: true, errors: [...TAKEN, 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REQUEST_IN_PROGRESS'] }),
    },
    update: {
      method: 'PATCH',
      path: '/customers/:identifier',
      summary: 'Change a customer',
      description:
        'Changes the given fields only; `null` removes one (a customer keeps an email or a phone: removing the last is `VALIDATION_ERROR`). An email or phone another customer of the brand has in this mode is `CUSTOMER_EMAIL_TAKEN` / `CUSTOMER_PHONE_TAKEN`. Needs the `write` scope.',
      pathParams: customerIdParams,
      body: updateCustomerBodySchema,
      responses: { 200: ok(customerSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Customers', errors: ['CUSTOMER_NOT_FOUND', ...TAKEN] }),
    },
    delete: {
      method: 'DELETE',
      path: '/customers/:identifier',
      summary: 'Delete (erase) a customer',
      description: [
        'Erases the customer\'s personal data for good: name, email, phone and their keyed hashes are removed, and the customer is gone from every read (`CUSTOMER_NOT_FOUND` from then on).',
        'Their payments stay as they were (amounts, status, transaction ids) without a customer name or email: a payment record is kept for accounting, the person is not.',
        'The email and phone are free again: a later payment or create with them makes a new customer. Needs the `write` scope.',
      ].join(' '),
      pathParams: customerIdParams,
      body: z.strictObject({}).optional().describe('No body.'),
      responses: { 204: c.noBody() },
      metadata: meta({ auth: 'merchant', tag: 'Customers', errors: ['CUSTOMER_NOT_FOUND'] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
