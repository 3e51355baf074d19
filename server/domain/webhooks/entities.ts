import { defineEntity, p } from '@mikro-orm/core';
import { Brand } from '../brands/entities.ts';
import { modes } from '../../../contract/common/mode.ts';
import { deliveryAttemptOutcomes, deliveryStatuses, endpointDisabledReasons } from '../../../contract/merchant/webhooks.ts';
export type { DeliveryStatus } from '../../../contract/merchant/webhooks.ts';

/**
 * Mirrors migrations/0002-webhooks.ts and 0017-webhook-endpoints.ts. The delivery engine itself works in SQL
 * (conditional updates, row locks) and reads these tables with em.execute; the
 * entities are for simple reads and for other areas' queries.
 */

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    brand: () => p.manyToOne(Brand),
    /** Null: receives both modes (set through the singular route). */
    mode: p.enum(modes).nullable(),
    url: p.text(),
    description: p.text().default(''),
    events: p.array(),
    enabled: p.boolean().default(true),
    /** PII-cipher token; never clear text. */
    secretEncrypted: p.text(),
    /** Rotated-out secrets still signing: [{ secret: token, expires_at: ISO }]. */
    previousSecrets: p.json<Array<{ secret: string; expires_at: string }>>(),
    disabledReason: p.enum(endpointDisabledReasons).nullable(),
    disabledAt: p.datetime().nullable(),
    failingSince: p.datetime().nullable(),
    lastSuccessAt: p.datetime().nullable(),
    lastFailureAt: p.datetime().nullable(),
    consecutiveFailures: p.integer().default(0),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const WebhookEvent = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    publicId: p.string().length(40).unique(),
    brand: () => p.manyToOne(Brand),
    event: p.string().length(40),
    transactionId: p.bigint('number').nullable(),
    payload: p.text(),
    createdAt: p.datetime(),
  },
});

export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    event: () => p.manyToOne(WebhookEvent),
    /** Null once the endpoint was deleted (the log stays). */
    endpoint: () => p.manyToOne(WebhookEndpoint).nullable(),
    brand: () => p.manyToOne(Brand),
    url: p.text(),
    status: p.enum(deliveryStatuses).default('pending'),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().nullable(),
    leaseUntil: p.datetime().nullable(),
    leaseToken: p.uuid().nullable(),
    firstAttemptAt: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    responseStatus: p.integer().nullable(),
    responseBody: p.text().nullable(),
    lastError: p.text().nullable(),
    deliveredAt: p.datetime().nullable(),
    deadLetteredAt: p.datetime().nullable(),
    replayedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const WebhookAttempt = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    delivery: () => p.manyToOne(WebhookDelivery),
    attempt: p.integer(),
    url: p.text(),
    outcome: p.enum(deliveryAttemptOutcomes),
    requestedAt: p.datetime(),
    durationMs: p.integer().nullable(),
    responseStatus: p.integer().nullable(),
    responseBody: p.text().nullable(),
    errorKind: p.text().nullable(),
    error: p.text().nullable(),
    nextAttemptAt: p.datetime().nullable(),
  },
});

export const webhookEntities = [WebhookEndpoint, WebhookEvent, WebhookDelivery, WebhookAttempt];
