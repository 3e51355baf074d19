import { createHmac } from 'node:crypto';
import { webhookEventSchema } from '../../contract/events.ts';
import { DEFAULT_TOLERANCE_SECONDS, WEBHOOK_SIGNATURE_HEADER, WebhookSignatureError, constructEvent as verifyDelivery, type WebhookHeaders } from '../shared/webhook-verify.ts';
import type { WebhookEvent } from './api.generated.ts';

/**
 * Verifies a webhook delivery (HMAC-SHA256 over `{t}.{rawBody}`, header
 * `X-Webhook-Signature: t=…,v1=…`), then validates the body against the event
 * schemas and returns it as the `WebhookEvent` union, so checking `event.event`
 * narrows `event.data`. Throws `WebhookSignatureError`: a bad signature or stale
 * timestamp (`reason` says which), a body that is not a valid event
 * (`invalid_payload`), or an event name this SDK version does not know
 * (`unknown_event`: the signature was good, so answer 2xx and upgrade the SDK).
 * Pass the raw body exactly as received; during a secret rotation pass both secrets.
 */
export function constructEvent(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  now: number = Date.now(),
): WebhookEvent {
  const body = verifyDelivery(rawBody, headers, secret, toleranceSeconds, now);
  const parsed = webhookEventSchema.safeParse(body);
  if (!parsed.success) {
    const names = webhookEventSchema.options.map((o) => o.shape.event.value);
    if (!(names as readonly string[]).includes(body.event)) {
      throw new WebhookSignatureError('unknown_event', `Event "${body.event}" is not known to this SDK version (it knows ${names.join(', ')}).`);
    }
    const issue = parsed.error.issues[0]!;
    throw new WebhookSignatureError('invalid_payload', `The ${body.event} event does not match its schema at ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  const event: WebhookEvent = parsed.data;
  return event;
}

export interface SignTestPayloadOptions {
  /** Unix seconds to sign with; default now. */
  timestamp?: number;
}

/**
 * The `X-Webhook-Signature` value the service would send for `payload` (a string:
 * the exact body your test posts), for testing your receiver without the service.
 */
export function generateTestHeaderString(payload: string, secret: string, options: SignTestPayloadOptions = {}): string {
  if (typeof payload !== 'string') throw new TypeError('payload must be the exact body string you will send');
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret is required');
  const t = String(Math.floor(options.timestamp ?? Date.now() / 1000));
  const v1 = createHmac('sha256', secret).update(`${t}.${payload}`, 'utf8').digest('hex');
  return `t=${t},v1=${v1}`;
}

/**
 * A signed delivery for your own tests: the JSON body and the headers the service
 * would send with it. Feed both to your endpoint (or straight to `constructEvent`).
 */
export function signTestPayload(
  event: WebhookEvent,
  secret: string,
  options: SignTestPayloadOptions = {},
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(event);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      [WEBHOOK_SIGNATURE_HEADER]: generateTestHeaderString(body, secret, options),
      'x-webhook-id': event.id,
      'x-webhook-event': event.event,
    },
  };
}
