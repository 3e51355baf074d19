import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { livemodeSchema, meta, ok, timestampSchema, type ErrorCode } from '../common/index.ts';
import { webhookEventNameSchema } from '../events.ts';
import { deliveryAttemptOutcomes, deliveryStatuses, endpointDisabledReasons, modes, webhookSignings } from '../vocabulary.ts';

const c = initContract();

const SIGNING =
  '`paycollect`: `X-Webhook-Signature: t=…,v1=…` over `{t}.{body}` and this API\'s event bodies. `ownpay`: what OwnPay\'s plugins and SDKs verify and read ' +
  '(`X-Signature: sha256=<hex>` and `X-OwnPay-Signature: <hex>`, the HMAC-SHA256 of the raw body with the secret; `X-Timestamp`, `X-OwnPay-Timestamp`, `X-Event`; ' +
  'body `{event, data, timestamp}`; README "Coming from OwnPay").';
const signingInput = z.enum(webhookSignings).describe(SIGNING);

/**
 * A webhook endpoint of the brand (a brand has up to 16). The signing secret is
 * never shown here (only once, when issued).
 */
export const webhookEndpointSchema = z
  .object({
    id: z.number().int().describe('Endpoint id (`/api/v1/webhooks/endpoints/{id}`).'),
    mode: z
      .enum(modes)
      .nullable()
      .describe("The only mode whose events it receives: the mode of the key that created it. Null: both modes (the endpoint a live key set through the singular `PUT /api/v1/webhooks/endpoint`; it receives live events, so only a live key sees and manages it); the body's `livemode` tells them apart."),
    url: z.string().describe('Where deliveries are POSTed.'),
    description: z.string().describe('Your own label for it; may be empty.'),
    events: z.array(webhookEventNameSchema).describe('Events delivered to this endpoint.'),
    enabled: z.boolean().describe('False: events are recorded but not delivered, and queued deliveries become `dead_letter`.'),
    signing: z.enum(webhookSignings).describe(SIGNING),
    disabled_reason: z
      .enum(endpointDisabledReasons)
      .nullable()
      .describe('Why the endpoint is disabled: `merchant` (you disabled it), `gone` (it answered 410), `failing` (every attempt of a delivery failed over its whole retry window with no success in between). Null while enabled. Enable it again with `PUT` once fixed, then ask for a replay of what was missed.'),
    disabled_at: timestampSchema.nullable(),
    failing_since: timestampSchema.nullable().describe('First failed attempt since the last success, or null when the last attempt succeeded.'),
    last_success_at: timestampSchema.nullable(),
    last_failure_at: timestampSchema.nullable().describe('When the latest failed attempt to it ended.'),
    consecutive_failures: z.number().int().min(0).describe('Failed attempts since the last success (0 after a success, or when it is enabled again).'),
    previous_secret_expires_at: timestampSchema
      .nullable()
      .describe('While a rotated-out secret still signs (24 hours after a rotation), when it stops; null otherwise.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'WebhookEndpoint' });

const secretSchema = z
  .string()
  .describe('The signing secret (`whsec_…`). Shown only now; store it to verify `X-Webhook-Signature`.');

export const webhookEndpointCreatedSchema = webhookEndpointSchema.extend({ secret: secretSchema }).meta({ id: 'WebhookEndpointCreated' });

const endpointUrlSchema = z
  .url({ protocol: /^https?$/, error: 'Must be an absolute http(s) URL' })
  .max(2048, 'URLs are at most 2048 characters')
  .describe('Receiver URL. Must resolve to public addresses only (private, loopback, link-local and metadata addresses are refused), checked now and again at every delivery. Redirects are not followed.');

const endpointEventsSchema = z
  .array(webhookEventNameSchema)
  .min(1, 'Subscribe to at least one event')
  .refine((e) => new Set(e).size === e.length, 'Events must not repeat')
  .describe('Events to deliver.');

const descriptionSchema = z.string().max(200, 'At most 200 characters').describe('Your own label for the endpoint.');

export const createWebhookEndpointBodySchema = z
  .strictObject({
    url: endpointUrlSchema,
    events: endpointEventsSchema,
    description: descriptionSchema.optional(),
    enabled: z.boolean().optional().default(true).describe('Default true.'),
    signing: signingInput.optional().describe('Default `paycollect`. ' + SIGNING),
  })
  .meta({ id: 'CreateWebhookEndpointRequest' });

export const updateWebhookEndpointBodySchema = z
  .strictObject({
    url: endpointUrlSchema.optional(),
    events: endpointEventsSchema.optional(),
    description: descriptionSchema.optional(),
    enabled: z.boolean().optional().describe('Enabling clears an automatic disable (`gone`, `failing`) and the failure count; disabling records `merchant`.'),
    signing: signingInput.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'Give at least one of url, events, description, enabled, signing')
  .meta({ id: 'UpdateWebhookEndpointRequest' });

export const putWebhookEndpointBodySchema = z
  .strictObject({
    url: endpointUrlSchema,
    events: endpointEventsSchema,
    enabled: z.boolean().optional().default(true).describe('Default true. Enabling clears an automatic disable.'),
    signing: signingInput.optional().describe('Kept when omitted (`paycollect` for a new endpoint). ' + SIGNING),
  })
  .meta({ id: 'PutWebhookEndpointRequest' });

export const secretRotationSchema = z
  .object({
    secret: secretSchema,
    previous_secret_expires_at: timestampSchema.describe('Until then every delivery carries one `v1` for the new secret and one for the previous one.'),
  })
  .meta({ id: 'WebhookSecretRotation' });

/** A delivery of one event to the endpoint, as the delivery log shows it. */
export const webhookDeliverySchema = z
  .object({
    id: z.number().int(),
    endpoint_id: z.number().int().nullable().describe('The endpoint it goes to; null once that endpoint was deleted.'),
    event_id: z.string().describe('Event id (`evt_…`): the body `id` and the `X-Webhook-Id` header.'),
    transaction_id: z.number().int().nullable().describe('Internal transaction id, or null for events without one (device events).'),
    event: webhookEventNameSchema,
    url: z.string().describe('Target URL of the latest attempt.'),
    payload: z.string().describe('The JSON body sent, serialised as a string (byte for byte what was signed).'),
    response_status: z.number().int().nullable().describe('HTTP status of the latest attempt; null before the first one or when no response came.'),
    response_body: z.string().nullable().describe('Body of the latest response, cut to 4 KB.'),
    attempts: z.number().int().describe('Attempts made (replays keep counting).'),
    status: z
      .enum(deliveryStatuses)
      .describe('`pending` (not attempted yet, or replayed), `retrying` (failed, another attempt scheduled), `success`, `dead_letter` (every attempt failed; an admin can replay it).'),
    last_error: z.string().nullable().describe('Why the latest attempt failed (timeout, connection, redirect, status).'),
    next_attempt_at: timestampSchema.nullable(),
    last_attempt_at: timestampSchema.nullable(),
    delivered_at: timestampSchema.nullable(),
    created_at: timestampSchema,
    livemode: livemodeSchema.describe("The event's mode; a key lists only its own mode's deliveries."),
    test: z.boolean().describe('True for a test event sent with `POST /api/v1/webhooks/tests` (no object changed).'),
  })
  .meta({ id: 'WebhookDelivery' });

export const sendTestEventBodySchema = z
  .strictObject({
    event: webhookEventNameSchema.describe('Which event to send, with a realistic sample `data` body of that event.'),
  })
  .meta({ id: 'SendWebhookTestRequest' });

export const webhookAttemptSchema = z
  .object({
    attempt: z.number().int().min(1),
    url: z.string(),
    outcome: z.enum(deliveryAttemptOutcomes).describe('`abandoned`: the worker stopped mid-attempt; the receiver may have got it.'),
    requested_at: timestampSchema,
    duration_ms: z.number().int().nullable(),
    response_status: z.number().int().nullable(),
    response_body: z.string().nullable().describe('Cut to 4 KB.'),
    error_kind: z.string().nullable().describe('`timeout`, `connection`, `redirect`, `ssrf`, `tls`, `other`, `abandoned`, or null.'),
    error: z.string().nullable(),
    next_attempt_at: timestampSchema.nullable().describe('When the retry this failure scheduled is due.'),
  })
  .meta({ id: 'WebhookAttempt' });

export const webhookDeliveryDetailSchema = webhookDeliverySchema
  .extend({ attempt_log: z.array(webhookAttemptSchema).describe('Every attempt, oldest first.') })
  .meta({ id: 'WebhookDeliveryDetail' });

export const endpointMeta = <const E extends readonly ErrorCode[] = readonly []>(errors: E = [] as unknown as E) => meta({ auth: 'merchant', tag: 'Webhooks', scope: 'webhooks', errors });

export const webhooksContract = c.router(
  {
    getEndpoint: {
      method: 'GET',
      path: '/webhooks/endpoint',
      summary: 'Default webhook endpoint',
      description:
        "The brand's default endpoint (the first one, lowest id, that the calling key's mode sees) and its health. The secret is not shown. Kept as an alias: with several endpoints use `GET /api/v1/webhooks/endpoints`.",
      responses: { 200: ok(webhookEndpointSchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND']),
    },
    putEndpoint: {
      method: 'PUT',
      path: '/webhooks/endpoint',
      summary: 'Set the default webhook endpoint',
      description:
        'An alias of the default endpoint (the first one the calling key sees; a test key sees only test endpoints): creates it when there is none (201, with its signing secret shown once): with a live key one receiving both modes, with a test key a test endpoint, since a test key never sets up, changes, rotates, disables or deletes anything that receives live events; or replaces its URL, events and enabled flag (200; the secret is kept). Prefer `POST /api/v1/webhooks/endpoints` for new integrations. Creates the endpoint (201, with its signing secret shown once) or replaces its URL, events and enabled flag (200; the secret is kept). Deliveries carry `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "{t}.{raw body}">`, `X-Webhook-Id` (the event id, stable across retries and replays: deduplicate on it), `X-Webhook-Event` and `X-Webhook-Attempt` (and `X-Webhook-Test: true` on a sample event, whose body says `"test": true`); only a 2xx answer within the attempt timeout counts as delivered, redirects are not followed, and 410 disables the endpoint.',
      body: putWebhookEndpointBodySchema,
      responses: { 200: ok(webhookEndpointSchema), 201: ok(webhookEndpointCreatedSchema) },
      metadata: endpointMeta(['WEBHOOK_URL_NOT_ALLOWED']),
    },
    rotateSecret: {
      method: 'POST',
      path: '/webhooks/endpoint/secret-rotations',
      summary: 'Rotate the default endpoint\'s signing secret',
      description:
        'Alias of `POST /api/v1/webhooks/endpoints/{id}/secret-rotations` for the default endpoint. Issues a new signing secret, shown once. The previous secret keeps signing for 24 hours (each delivery then has one `v1` per secret), so receivers can switch without missing a delivery. Rotating again within the 24 hours keeps the older secrets signing until their own expiry.',
      body: z.strictObject({}).optional().describe('No body (an empty object is accepted).'),
      responses: { 201: ok(secretRotationSchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND']),
    },
    listDeliveries: {
      method: 'GET',
      path: '/webhooks/deliveries',
      summary: 'Recent webhook deliveries',
      description: 'The 50 most recent deliveries of the brand, newest first.',
      responses: { 200: ok(z.array(webhookDeliverySchema)) },
      metadata: endpointMeta(),
    },
    sendTest: {
      method: 'POST',
      path: '/webhooks/tests',
      summary: 'Send a test event',
      description:
        "Alias of `POST /api/v1/webhooks/endpoints/{id}/tests` for the default endpoint. Sends a signed sample event of the chosen type to the brand's default endpoint, through the same delivery pipeline as real events (retries, delivery log): " +
        'nothing changes anywhere: the body carries `livemode` of the calling key, and its `data` is a realistic sample valid against the event schema whose ids name no real object. ' +
        'The delivery is returned and listed by `GET /api/v1/webhooks/deliveries`. No endpoint: `WEBHOOK_ENDPOINT_NOT_FOUND`; a disabled endpoint: `INVALID_STATE` (enable it first).',
      body: sendTestEventBodySchema,
      responses: { 201: ok(webhookDeliverySchema) },
      metadata: endpointMeta(['WEBHOOK_ENDPOINT_NOT_FOUND', 'INVALID_STATE']),
    },
    getDelivery: {
      method: 'GET',
      path: '/webhooks/deliveries/:id',
      summary: 'One webhook delivery with its attempts',
      description: 'Every attempt with its request time, duration, response status, response body (cut to 4 KB) and error.',
      pathParams: z.object({ id: z.string().regex(/^[1-9][0-9]{0,17}$/, 'Must be a delivery id').transform(Number).describe('Delivery id.') }),
      responses: { 200: ok(webhookDeliveryDetailSchema) },
      metadata: endpointMeta(['DELIVERY_NOT_FOUND']),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
