import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import {
  createApiKeyAudited,
  createBrandAudited,
  getAdminBrand,
  listApiKeys,
  listBrands,
  revokeApiKeyAudited,
  updateBrand,
} from '../../../domain/brands/admin.ts';
import { deleteBrandLogoAudited, setBrandLogoAudited } from '../../../domain/brands/look.ts';
import { listBrandEndpoints, setEndpointSigningAudited } from '../../../domain/webhooks/endpoints.ts';
import { endpointBody } from '../merchant/webhooks.ts';
import { adminActor, pageMeta } from './actor.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

export const adminBrandHandlers = s.router(contract.admin.brands, {
  create: async ({ req, body }) => {
    const brand = await createBrandAudited(req.db, adminActor(req), body);
    return { status: 201, body: { success: true, data: brand } };
  },
  list: async ({ req, query }) => {
    const { items, total } = await lagTolerant(req, (db) => listBrands(db, { page: query.page, perPage: query.per_page, status: query.status, brandIds: brandScopeOf(req.principal) }));
    return { status: 200, body: { success: true, data: items, meta: pageMeta(query.page, query.per_page, total) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await getAdminBrand(req.db, params.brand_id) } };
  },
  update: async ({ req, params, body }) => {
    const brand = await updateBrand(req.db, adminActor(req), params.brand_id, body);
    return { status: 200, body: { success: true, data: brand } };
  },
  setLogo: async ({ req, params, body }) => {
    const logo = await setBrandLogoAudited(req.db, adminActor(req), params.brand_id, body.content_base64);
    return { status: 200, body: { success: true, data: logo } };
  },
  deleteLogo: async ({ req, params }) => {
    await deleteBrandLogoAudited(req.db, adminActor(req), params.brand_id);
    return { status: 200, body: { success: true, data: await getAdminBrand(req.db, params.brand_id) } };
  },
  createApiKey: async ({ req, params, body }) => {
    const key = await createApiKeyAudited(req.db, adminActor(req), params.brand_id, body);
    return { status: 201, body: { success: true, data: key } };
  },
  listApiKeys: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: await listApiKeys(req.db, params.brand_id) } };
  },
  listWebhookEndpoints: async ({ req, params }) => {
    await getAdminBrand(req.db, params.brand_id);
    return { status: 200, body: { success: true, data: (await listBrandEndpoints(req.db, params.brand_id)).map(endpointBody) } };
  },
  setWebhookEndpointSigning: async ({ req, params, body }) => {
    await getAdminBrand(req.db, params.brand_id);
    const endpoint = await setEndpointSigningAudited(req.db, adminActor(req), params.brand_id, params.endpoint_id, body.signing);
    return { status: 200, body: { success: true, data: endpointBody(endpoint) } };
  },
  revokeApiKey: async ({ req, params }) => {
    const key = await revokeApiKeyAudited(req.db, adminActor(req), params.brand_id, params.key_id);
    return { status: 200, body: { success: true, data: key } };
  },
});
