import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { getBrand } from '../../../domain/brands/service.ts';
import { merchantOf } from '../../context.ts';

const s = initServer();

export const merchantBrandHandlers = s.router(contract.merchant.brand, {
  get: async ({ req }) => {
    const brand = await getBrand(req.db, merchantOf(req).brandId);
    return {
      status: 200,
      body: {
        success: true,
        data: { id: brand.id, uuid: brand.uuid, name: brand.name, timezone: brand.timezone, created_at: brand.createdAt.toISOString() },
      },
    };
  },
});
