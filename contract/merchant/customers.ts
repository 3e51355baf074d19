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
      summary: 'Find a customer by email or phone',
      description:
        'An identifier containing `@` is looked up as an email, anything else as a phone number (E.164 or national), through keyed hashes of the normalised value. Personal data in clear. `CUSTOMER_NOT_FOUND` when no customer of the calling brand matches.',
      pathParams: z.object({ identifier: z.string().describe('URL-encoded email address or phone number.') }),
      responses: { 200: ok(customerSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Customers', errors: ['CUSTOMER_NOT_FOUND'] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
