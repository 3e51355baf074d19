import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ok } from '../common/index.ts';
import {
  createWebhookEndpointBodySchema,
  endpointMeta,
  secretRotationSchema,
  sendTestEventBodySchema,
  updateWebhookEndpointBodySchema,
  webhookDeliverySchema,
  webhookEndpointCreatedSchema,
  webhookEndpointSchema,
} from './webhooks.ts';

const c = initContract();

const idParams = z.object({
  id: z.string().regex(/^[1-9][0-9]{0,17}$/, 'Must be a webhook endpoint id').transform(Number).describe('Webhook endpoint id.'),
});

/**
 * Several webhook endpoints per brand. Each has its own URL, events, secret,
 * health and enabled state; every event goes to every enabled endpoint that
 * subscribed to it and takes its mode, each delivery signed with that
 * endpoint's secret. A key sees and changes only endpoints of its own mode and
 * the both-modes one set through the singular route with a live key (a live
 * object: a test key sees only test endpoints).
 */
export const webhookEndpointsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/webhooks/endpoints',
      summary: 'List webhook endpoints',
      description: "The brand's endpoints the calling key's mode sees, oldest first, with their health. Secrets are not shown.",
      responses: { 200: ok(z.array(webhookEndpointSchema)) },
      metadata: endpointMeta(),
    },
    create: {
      method: 'POST',
      path: '/webhooks/endpoints',
      summary: 'Add a webhook endpoint',
      description:
        'Adds an endpoint receiving the events of the calling key\'s mode only (a test key\'s endpoint gets test events, a live key\'s live events). Its signing secret is in the answer, shown this once. A brand has at most 16 endpoints (`WEBHOOK_ENDPOINT_LIMIT_REACHED`).',
      body: createWebhookEndpointBodySchema,
      responses: { 201: ok(webhookEndpointCreatedSchema) },
      metadata: endpointMeta(['WEBHOOK_URL_NOT_ALLOWED', 'WEBHOOK_ENDPOINT_LIMIT_REACHED']),
    },
    get: {
      method: 'GET',
      path: '/webhooks/endpoints/:id',
      summary: 'One webhook endpoint',
      description: 'One endpoint of the calling brand and mode with its health (consecutive failures, automatic disabling). The signing secret is never shown again after creation or rotation.',
      pathParams: idParams,
      responses: { 200: ok(webhookEndpointSchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND']),
    },
    update: {
      method: 'PATCH',
      path: '/webhooks/endpoints/:id',
      summary: 'Change a webhook endpoint',
      description: 'Changes the given fields only; the secret is kept. Enable an automatically disabled endpoint here once it is fixed, then ask for a replay of what it missed.',
      pathParams: idParams,
      body: updateWebhookEndpointBodySchema,
      responses: { 200: ok(webhookEndpointSchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND', 'WEBHOOK_URL_NOT_ALLOWED']),
    },
    delete: {
      method: 'DELETE',
      path: '/webhooks/endpoints/:id',
      summary: 'Delete a webhook endpoint',
      description: 'Deletes the endpoint and answers with it as it was. Its delivery log stays (`endpoint_id` becomes null); deliveries not finished yet become `dead_letter` with `endpoint deleted`.',
      pathParams: idParams,
      body: z.strictObject({}).optional().describe('No body.'),
      responses: { 200: ok(webhookEndpointSchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND']),
    },
    rotateSecret: {
      method: 'POST',
      path: '/webhooks/endpoints/:id/secret-rotations',
      summary: "Rotate an endpoint's signing secret",
      description: 'Issues a new signing secret for this endpoint, shown once. The previous one keeps signing for 24 hours (one `v1` per secret).',
      pathParams: idParams,
      body: z.strictObject({}).optional().describe('No body (an empty object is accepted).'),
      responses: { 201: ok(secretRotationSchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND']),
    },
    sendTest: {
      method: 'POST',
      path: '/webhooks/endpoints/:id/tests',
      summary: 'Send a test event to an endpoint',
      description:
        'Sends a signed sample event of the chosen type to this endpoint only, whatever events it subscribed to, through the ordinary delivery pipeline; nothing else changes. The body carries `livemode` of the calling key. A disabled endpoint: `INVALID_STATE` (enable it first).',
      pathParams: idParams,
      body: sendTestEventBodySchema,
      responses: { 201: ok(webhookDeliverySchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND', 'INVALID_STATE']),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
