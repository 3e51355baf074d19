import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { getDelivery, listRecentDeliveries, toAttemptResource, type DeliveryView } from '../../../domain/webhooks/deliveries.ts';
import { getEndpoint, putEndpoint, rotateSecret, type EndpointView } from '../../../domain/webhooks/endpoints.ts';
import { sendTestEvent } from '../../../domain/webhooks/test-events.ts';
import { merchantOf } from '../../context.ts';
import { lagTolerant } from '../../reads.ts';

const s = initServer();

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function endpointBody(e: EndpointView) {
  return {
    id: e.id,
    mode: e.mode,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.enabled,
    signing: e.signing,
    disabled_reason: e.disabledReason,
    disabled_at: iso(e.disabledAt),
    failing_since: iso(e.failingSince),
    last_success_at: iso(e.lastSuccessAt),
    last_failure_at: iso(e.lastFailureAt),
    consecutive_failures: e.consecutiveFailures,
    previous_secret_expires_at: iso(e.previousSecretExpiresAt),
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

export function deliveryBody(d: DeliveryView) {
  return {
    id: d.id,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    transaction_id: d.transactionId,
    event: d.event,
    url: d.url,
    payload: d.payload,
    response_status: d.responseStatus,
    response_body: d.responseBody,
    attempts: d.attempts,
    status: d.status,
    last_error: d.lastError,
    next_attempt_at: iso(d.nextAttemptAt),
    last_attempt_at: iso(d.lastAttemptAt),
    delivered_at: iso(d.deliveredAt),
    created_at: d.createdAt.toISOString(),
    livemode: d.mode === 'live',
    test: d.test,
  };
}

export function merchantWebhookHandlers(deps: AppDeps) {
  return s.router(contract.merchant.webhooks, {
    getEndpoint: async ({ req }) => {
      const { brandId, mode } = merchantOf(req);
      const endpoint = await getEndpoint(req.db, brandId, mode);
      return { status: 200, body: { success: true, data: endpointBody(endpoint) } };
    },
    putEndpoint: async ({ req, body }) => {
      const result = await putEndpoint(req.db, deps.crypto.pii, merchantOf(req), body, {
        allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE_URLS,
      });
      if (result.created) {
        return { status: 201, body: { success: true, data: { ...endpointBody(result.endpoint), secret: result.secret! } } };
      }
      return { status: 200, body: { success: true, data: endpointBody(result.endpoint) } };
    },
    rotateSecret: async ({ req }) => {
      const rotated = await rotateSecret(req.db, deps.crypto.pii, merchantOf(req));
      return {
        status: 201,
        body: { success: true, data: { secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt.toISOString() } },
      };
    },
    listDeliveries: async ({ req }) => {
      const { brandId, mode } = merchantOf(req);
      const deliveries = await lagTolerant(req, (db) => listRecentDeliveries(db, brandId, mode));
      return { status: 200, body: { success: true, data: deliveries.map(deliveryBody) } };
    },
    sendTest: async ({ req, body }) => {
      const { brandId, mode } = merchantOf(req);
      const delivery = await sendTestEvent(req.db, { brandId, mode, event: body.event });
      return { status: 201, body: { success: true, data: deliveryBody(delivery) } };
    },
    getDelivery: async ({ req, params }) => {
      const { brandId, mode } = merchantOf(req);
      const delivery = await getDelivery(req.db, brandId, params.id, mode);
      return { status: 200, body: { success: true, data: { ...deliveryBody(delivery), attempt_log: delivery.attemptLog.map(toAttemptResource) } } };
    },
  });
}
