import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import {
  createCustomer, eraseCustomerByUuid, getCustomerByIdentifier, listCustomers, updateCustomerByUuid, type CustomerView,
} from '../../../domain/customers/service.ts';
import { merchantOf } from '../../context.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

const customerBody = (c: CustomerView, mode: string) => ({
  id: c.id,
  uuid: c.uuid,
  name: c.name,
  email: c.email,
  phone: c.phone,
  created_at: c.createdAt.toISOString(),
  livemode: mode === 'live',
});

export function merchantCustomerHandlers(deps: AppDeps) {
  return s.router(contract.merchant.customers, {
    list: async ({ req, query }) => {
      const { brandId, mode } = merchantOf(req);
      const { items, total } = await lagTolerant(req, (db) => listCustomers(db, deps.crypto, brandId, mode, { page: query.page, perPage: query.per_page }));
      return {
        status: 200,
        body: {
          success: true,
          data: items.map((c) => ({
            id: c.id,
            uuid: c.uuid,
            name: c.name,
            email_masked: c.emailMasked,
            phone_masked: c.phoneMasked,
            created_at: c.createdAt.toISOString(),
            livemode: mode === 'live',
          })),
          meta: { page: query.page, per_page: query.per_page, total },
        },
      };
    },
    get: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const c = await getCustomerByIdentifier(req.db, deps.crypto, brandId, mode, params.identifier);
      return { status: 200, body: { success: true, data: customerBody(c, mode) } };
    },
    create: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      const c = await createCustomer(req.db, deps.crypto, brandId, mode, body);
      return { status: 201, body: { success: true, data: customerBody(c, mode) } };
    },
    update: async ({ req, params, body }) => {
      const { brandId, mode } = merchantOf(req);
      const c = await updateCustomerByUuid(req.db, deps.crypto, brandId, mode, params.identifier, body);
      return { status: 200, body: { success: true, data: customerBody(c, mode) } };
    },
    delete: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      await eraseCustomerByUuid(req.db, brandId, mode, params.identifier);
      return { status: 204, body: undefined };
    },
  });
}
