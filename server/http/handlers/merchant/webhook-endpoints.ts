import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint } from '../../../domain/webhooks/endpoints.ts';
import { sendTestEvent } from '../../../domain/webhooks/test-events.ts';
import { merchantOf } from '../../context.ts';
import { deliveryBody, endpointBody } from './webhooks.ts';

const s = initServer();

export function merchantWebhookEndpointHandlers(deps: AppDeps) {
  const opts = () => ({ allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE_URLS });
  return s.router(contract.merchant.webhookEndpoints, {
    list: async ({ req }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: (await listEndpoints(req.db, brandId, mode)).map(endpointBody) } };
    },
    create: async ({ req, body }) => {
      const made = await createEndpoint(req.db, deps.crypto.pii, merchantOf(req), body, opts());
      return { status: 201, body: { success: true, data: { ...endpointBody(made.endpoint), secret: made.secret } } };
    },
    get: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      return { status: 200, body: { success: true, data: endpointBody(await getEndpoint(req.db, brandId, mode, params.id)) } };
    },
    update: async ({ req, params, body }) => {
      const endpoint = await updateEndpoint(req.db, merchantOf(req), params.id, body, opts());
      return { status: 200, body: { success: true, data: endpointBody(endpoint) } };
    },
    delete: async ({ req, params }) => {
      return { status: 200, body: { success: true, data: endpointBody(await deleteEndpoint(req.db, merchantOf(req), params.id)) } };
    },
    rotateSecret: async ({ req, params }) => {
      const rotated = await rotateSecret(req.db, deps.crypto.pii, merchantOf(req), params.id);
      return {
        status: 201,
        body: { success: true, data: { secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt.toISOString() } },
      };
    },
    sendTest: async ({ req, params, body }) => {
      const { brandId, mode } = merchantOf(req);
      const delivery = await sendTestEvent(req.db, { brandId, mode, event: body.event, endpointId: params.id });
      return { status: 201, body: { success: true, data: deliveryBody(delivery) } };
    },
  });
}
