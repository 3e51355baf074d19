import { defineEntity, p } from '@mikro-orm/core';
import { webhookEventNames, webhookSignings, modes, deliveryAttemptOutcomes, deliveryStatuses, endpointDisabledReasons } from '../../../contract/vocabulary.ts';
import { Brand } from '../brands/entities.ts';
export type { DeliveryStatus } from '../../../contract/vocabulary.ts';

/**
 * The webhook tables (migrations 0002, 0010, 0017). The delivery engine's
 * conditional updates and row locks go through the typed builder (db.ts).
 * Each event's and delivery's `mode` is set by a trigger from the brand's
 * payment or the event (migration 0010) and never changes.
 */

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  // The outbox's fan-out read: a brand's endpoints in id order.
  indexes: [{ name: 'webhook_endpoints_brand_idx', properties: ['brand', 'id'] }],
  checks: [
    { name: 'webhook_endpoints_consecutive_failures_check', expression: 'consecutive_failures >= 0' },
    { name: 'webhook_endpoints_description_check', expression: 'length(description) <= 200' },
  ],
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    brand: () => p.manyToOne(Brand).foreignKeyName('webhook_endpoints_brand_id_fkey').deleteRule('cascade'),
    /** Null: receives both modes (set through the singular route). */
    mode: p.enum(modes).nullable(),
    url: p.text(),
    description: p.text().default(''),
    events: p.array<string>().columnType('text[]'),
    enabled: p.boolean().default(true),
    /** How deliveries are signed and shaped (README "Coming from OwnPay"). */
    signing: p.enum(webhookSignings).default('paycollect'),
    /** PII-cipher token; never clear text. */
    secretEncrypted: p.text(),
    /** Rotated-out secrets still signing: [{ secret: token, expires_at: ISO }]. */
    previousSecrets: p.json<Array<{ secret: string; expires_at: string }>>().defaultRaw(`'[]'::jsonb`),
    disabledReason: p.enum(endpointDisabledReasons).nullable(),
    disabledAt: p.datetime().nullable(),
    failingSince: p.datetime().nullable(),
    lastSuccessAt: p.datetime().nullable(),
    lastFailureAt: p.datetime().nullable(),
    consecutiveFailures: p.integer().default(0),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export const WebhookEvent = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  indexes: [
    { name: 'webhook_events_brand_created_idx', columns: [{ name: 'brand' }, { name: 'createdAt', sort: 'DESC' }] },
    { name: 'webhook_events_brand_mode_id_idx', properties: ['brand', 'mode', 'id'] },
    { name: 'webhook_events_transaction_idx', properties: ['transactionId'], where: 'transaction_id IS NOT NULL' },
    // The retention job's walk, oldest first (domain/retention).
    { name: 'webhook_events_created_idx', properties: ['createdAt'] },
  ],
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    publicId: p.string().length(40).unique('webhook_events_public_id_key'),
    brand: () => p.manyToOne(Brand).foreignKeyName('webhook_events_brand_id_fkey').deleteRule('cascade'),
    event: p.enum(webhookEventNames).columnType('varchar(40)'),
    /** The payment's transaction, for events about one (no foreign key: the event outlives nothing it names). */
    transactionId: p.bigint('number').nullable(),
    /** The signed body, stored as sent. */
    payload: p.text(),
    mode: p.enum(modes).default('live'),
    /** A sample sent by `POST /webhooks/tests` (ids naming no real object). */
    isTest: p.boolean().default(false),
    /** Why the payment's own `callback_url` got no delivery of this event (it is not a registered endpoint URL of the brand); null otherwise. */
    callbackNote: p.text().nullable(),
    createdAt: p.datetime(),
  },
});

export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ name: 'webhook_deliveries_event_id_endpoint_id_key', properties: ['event', 'endpoint'] }],
  indexes: [
    // As DDL: MikroORM 7.2 reads `id DESC` after `brand_id` back as `id` (it finds
    // the name inside `brand_id`), so a column list would never compare equal.
    { name: 'webhook_deliveries_brand_mode_recent_idx', expression: 'create index "webhook_deliveries_brand_mode_recent_idx" on "webhook_deliveries" ("brand_id", "mode", "created_at" desc, "id" desc)' },
    { name: 'webhook_deliveries_brand_recent_idx', expression: 'create index "webhook_deliveries_brand_recent_idx" on "webhook_deliveries" ("brand_id", "created_at" desc, "id" desc)' },
    { name: 'webhook_deliveries_dead_idx', properties: ['deadLetteredAt'], where: `status = 'dead_letter'::text` },
    { name: 'webhook_deliveries_due_idx', properties: ['nextAttemptAt'], where: `status = ANY (ARRAY['pending'::text, 'retrying'::text])` },
    { name: 'webhook_deliveries_endpoint_idx', properties: ['endpoint'] },
    // The retention job's walk over finished deliveries, oldest first (domain/retention).
    { name: 'webhook_deliveries_finished_idx', properties: ['createdAt'], where: `status = ANY (ARRAY['success'::text, 'dead_letter'::text])` },
  ],
  checks: [{ name: 'webhook_deliveries_attempts_check', expression: 'attempts >= 0' }],
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    event: () => p.manyToOne(WebhookEvent).foreignKeyName('webhook_deliveries_event_id_fkey').deleteRule('cascade'),
    /** Null once the endpoint was deleted (the log stays). */
    endpoint: () => p.manyToOne(WebhookEndpoint).nullable().foreignKeyName('webhook_deliveries_endpoint_id_fkey').deleteRule('set null'),
    brand: () => p.manyToOne(Brand).foreignKeyName('webhook_deliveries_brand_id_fkey').deleteRule('cascade'),
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
    /** The event's mode, set by a trigger (migration 0010). */
    mode: p.enum(modes).default('live'),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
    updatedAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

/**
 * One HTTP try of a delivery. Partitioned by month of `requestedAt` (native
 * range partitioning), so expiry drops a month's partition instead of deleting
 * rows (domain/retention). The retention job creates the months ahead and
 * drops expired ones; only the default partition, which holds the rows from
 * before partitioning and any row of a month not created in time, is declared
 * here, and the schema check leaves the job's months out (schema-diff.ts).
 * A partitioned table's keys must hold the partition key, so the primary key
 * is (id, requested_at) and the one attempt per number is (delivery, attempt,
 * requested_at): an attempt's number and start time are taken together when
 * it starts (`last_attempt_at`), and the abandoned row and the finished one
 * both carry that time, so they still meet on this key.
 */
export const WebhookAttempt = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  partitionBy: { type: 'range', expression: 'requestedAt', partitions: [{ name: 'webhook_attempts_default', values: 'default' }] },
  uniques: [{ name: 'webhook_attempts_delivery_id_attempt_key', properties: ['delivery', 'attempt', 'requestedAt'] }],
  indexes: [{ name: 'webhook_attempts_requested_idx', properties: ['requestedAt'] }],
  checks: [{ name: 'webhook_attempts_attempt_check', expression: 'attempt >= 1' }],
  properties: {
    id: p.bigint('number').primary().autoincrement().generated('by default as identity'),
    delivery: () => p.manyToOne(WebhookDelivery).foreignKeyName('webhook_attempts_delivery_id_fkey').deleteRule('cascade'),
    attempt: p.integer(),
    url: p.text(),
    outcome: p.enum(deliveryAttemptOutcomes),
    requestedAt: p.datetime().primary(),
    durationMs: p.integer().nullable(),
    responseStatus: p.integer().nullable(),
    responseBody: p.text().nullable(),
    errorKind: p.text().nullable(),
    error: p.text().nullable(),
    nextAttemptAt: p.datetime().nullable(),
  },
});

export const webhookEntities = [WebhookEndpoint, WebhookEvent, WebhookDelivery, WebhookAttempt];
