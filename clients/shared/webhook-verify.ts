import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Merchant-side webhook verification, shipped inside the SDKs: it must stay free of
 * server imports. Mirrors server/domain/webhooks/signature.ts (HMAC-SHA256 over
 * `${t}.${rawBody}`, key = the whole `whsec_…` secret as UTF-8).
 */

export const WEBHOOK_SIGNATURE_HEADER = 'x-webhook-signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookSignatureErrorReason =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_outside_tolerance'
  | 'no_matching_signature'
  | 'invalid_payload'
  | 'unknown_event'
  | 'no_secret';

export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
  readonly reason: WebhookSignatureErrorReason;
  constructor(reason: WebhookSignatureErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export interface WebhookEvent<TData = Record<string, unknown>> {
  id: string;
  event: string;
  created_at: string;
  data: TData;
}

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const HEX_SHA256 = /^[0-9a-f]{64}$/i;
const UNIX_SECONDS = /^\d{1,15}$/;

/**
 * Verifies a delivery and returns its parsed event. Pass the body exactly as it came
 * off the wire (string or bytes): re-serialising parsed JSON changes bytes and breaks
 * the signature, which is why a parsed object is refused with a hint.
 */
export function constructEvent<TData = Record<string, unknown>>(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  now: number = Date.now(),
): WebhookEvent<TData> {
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  if (secrets.length === 0 || secrets.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new WebhookSignatureError('no_secret', 'No webhook signing secret was given.');
  }
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new WebhookSignatureError(
      'invalid_payload',
      'The raw request body (string or bytes) is required; a parsed JSON body cannot be verified.',
    );
  }

  const header = readHeader(headers);
  if (header === undefined) {
    throw new WebhookSignatureError('missing_header', 'The X-Webhook-Signature header is missing.');
  }
  const { t, signatures } = parseHeader(header);
  const timestamp = Number(t);

  // Both directions: a far-future `t` would otherwise stay "fresh" forever.
  if (Math.abs(now / 1000 - timestamp) > toleranceSeconds) {
    throw new WebhookSignatureError('timestamp_outside_tolerance', 'The webhook timestamp is outside the tolerance window.');
  }

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  let matched = false;
  // No early exit: the work done does not depend on which candidate matched.
  for (const s of secrets) {
    const expected = createHmac('sha256', s).update(`${t}.`, 'utf8').update(body).digest();
    for (const candidate of signatures) {
      if (timingSafeEqual(expected, candidate)) matched = true;
    }
  }
  if (!matched) {
    throw new WebhookSignatureError('no_matching_signature', 'No signature matches the payload for the given secret.');
  }

  return parseEvent<TData>(rawBody);
}

function readHeader(headers: WebhookHeaders): string | undefined {
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(WEBHOOK_SIGNATURE_HEADER) ?? undefined;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== WEBHOOK_SIGNATURE_HEADER || value === undefined) continue;
    // Node joins repeated custom headers with ", "; frameworks may hand an array instead.
    return Array.isArray(value) ? value.join(',') : value;
  }
  return undefined;
}

// `t` stays the exact header text: the HMAC covers what was sent, not a re-formatted number.
function parseHeader(header: string): { t: string; signatures: Buffer[] } {
  let t: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0) throw malformed();
    const key = trimmed.slice(0, eq);
    const value = trimmed.slice(eq + 1);
    if (key === 't') {
      // Two different `t` values would make "which one was signed" ambiguous.
      if (!UNIX_SECONDS.test(value) || (t !== undefined && t !== value)) throw malformed();
      t = value;
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) throw malformed();
      signatures.push(Buffer.from(value, 'hex'));
    }
    // Other schemes (v0, v2…) are skipped so a future algorithm can be added alongside v1.
  }
  if (t === undefined || signatures.length === 0) throw malformed();
  return { t, signatures };
}

function malformed(): WebhookSignatureError {
  return new WebhookSignatureError('malformed_header', 'The X-Webhook-Signature header is not in the form t=<seconds>,v1=<hex>.');
}

function parseEvent<TData>(rawBody: string | Uint8Array): WebhookEvent<TData> {
  let parsed: unknown;
  try {
    const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookSignatureError('invalid_payload', 'The webhook body is not valid UTF-8 JSON.');
  }
  if (
    typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) ||
    typeof (parsed as Record<string, unknown>).id !== 'string' ||
    typeof (parsed as Record<string, unknown>).event !== 'string' ||
    typeof (parsed as Record<string, unknown>).created_at !== 'string' ||
    !('data' in parsed)
  ) {
    throw new WebhookSignatureError('invalid_payload', 'The webhook body is not an event object {id, event, created_at, data}.');
  }
  return parsed as WebhookEvent<TData>;
}
