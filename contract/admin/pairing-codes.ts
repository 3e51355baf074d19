import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { modeSchema, ok, timestampSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, idParam } from './shared.ts';

const c = initContract();

export const pairingCodeSchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    mode: modeSchema.describe('The mode of the device that pairs with it: a test device verifies only test payments, a live device only live ones.'),
    code: z.string().describe('The one-time code (`ABCDE-FGHJK`), shown only now; only its hash is stored. Typed into the app, which sends it as `Authorization: Bearer <code>` to `POST /api/mobile/v1/devices/pairings`.'),
    expires_at: timestampSchema,
  })
  .meta({ id: 'AdminPairingCode' });

export const adminPairingCodesContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/brands/:brand_id/pairing-codes',
      summary: 'Create a pairing code',
      description: 'A one-time code that pairs one phone with the brand. Valid 15 minutes unless `ttl_minutes` says otherwise; used once. Recorded in the audit log (without the code).',
      pathParams: z.object({ brand_id: idParam('brand') }),
      body: z
        .strictObject({
          ttl_minutes: z.number().int('Must be a whole number of minutes').min(1).max(10_080).optional().describe('Minutes the code stays valid, 1 to 10080 (7 days). Default 15.'),
          mode: modeSchema.optional().describe('Mode of the device that pairs with it (`test` devices verify only test payments; `live` only live ones). Default `live`.'),
        })
        .optional()
        .describe('Optional; an empty body takes the defaults.'),
      responses: { 201: ok(pairingCodeSchema) },
      metadata: adminMeta('Devices', ['BRAND_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
