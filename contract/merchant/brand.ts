import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok, timestampSchema, uuidSchema } from '../common/index.ts';

const c = initContract();

/** The brand (merchant account) that owns the calling API key. */
export const brandSchema = z
  .object({
    id: z.number().int().describe('Brand id.'),
    uuid: uuidSchema,
    name: z.string().describe('Display name shown to paying customers.'),
    timezone: z.string().describe('IANA time zone used for "today" figures.'),
    created_at: timestampSchema,
  })
  .meta({ id: 'Brand' });

export const brandContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/brand',
      summary: 'The calling brand',
      description: 'Returns the brand that owns the API key. Useful to check that a key works.',
      responses: { 200: ok(brandSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Brand' }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
