import { AppError } from '../../../contract/common/errors.ts';
import type { WebhookEventName } from '../../../contract/events.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { checkUrl, SsrfError } from '../../infra/http/ssrf.ts';
import { toDate, toDateStrict } from './rows.ts';
import { generateWebhookSecret } from './signature.ts';

/** A rotated-out secret keeps signing this long, so receivers can switch without losing deliveries. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Rotations inside the overlap stack up; beyond this many old secrets the oldest stops signing at once. */
const MAX_PREVIOUS_SECRETS = 4;

export type DisabledReason = 'merchant' | 'gone' | 'failing';

export interface EndpointView {
  url: string;
  events: WebhookEventName[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  disabledAt: Date | null;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

interface EndpointRow {
  id: string | number;
  brand_id: string | number;
  url: string;
  events: string[];
  enabled: boolean;
  secret_encrypted: string;
  previous_secrets: Array<{ secret: string; expires_at: string }>;
  disabled_reason: DisabledReason | null;
  disabled_at: string | Date | null;
  failing_since: string | Date | null;
  last_success_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
}

/** AAD context: a secret copied into another brand's row does not decrypt. */
export const secretContext = (brandId: number | string) => `webhook_endpoint.secret:brand:${brandId}`;

function liveSecrets(row: Pick<EndpointRow, 'previous_secrets'>, now: Date) {
  return row.previous_secrets.filter((p) => Date.parse(p.expires_at) > now.getTime());
}

function toView(row: EndpointRow, now = new Date()): EndpointView {
  const live = liveSecrets(row, now).map((p) => Date.parse(p.expires_at));
  return {
    url: row.url,
    events: row.events as WebhookEventName[],
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: toDate(row.disabled_at),
    failingSince: toDate(row.failing_since),
    lastSuccessAt: toDate(row.last_success_at),
    previousSecretExpiresAt: live.length ? new Date(Math.max(...live)) : null,
    createdAt: toDateStrict(row.created_at),
    updatedAt: toDateStrict(row.updated_at),
  };
}

/**
 * Every secret that signs a delivery now: the current one first, then rotated-out
 * ones still inside their overlap. One `v1` goes out per secret.
 */
export function signingSecrets(cipher: PiiCipher, row: Pick<EndpointRow, 'brand_id' | 'secret_encrypted' | 'previous_secrets'>, now = new Date()): string[] {
  const context = secretContext(row.brand_id);
  return [row.secret_encrypted, ...liveSecrets(row, now).map((p) => p.secret)].map((token) => cipher.decryptUnbound(token, context));
}

export async function getEndpoint(em: EntityManager, brandId: number): Promise<EndpointView> {
  const [row] = await em.execute<EndpointRow[]>('SELECT * FROM webhook_endpoints WHERE brand_id = ?', [brandId]);
  if (!row) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
  return toView(row);
}

/** The configuration-time SSRF check: a URL whose host resolves to a non-public address is refused. */
export async function assertUrlAllowed(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkUrl(url, { allowPrivate });
  } catch (err) {
    if (err instanceof SsrfError) throw new AppError('WEBHOOK_URL_NOT_ALLOWED', err.message, { field: 'url' });
    throw err;
  }
}

/**
 * Creates or replaces the brand's endpoint. The signing secret is made only when
 * the endpoint is created and returned that once; replacing keeps it. Enabling
 * clears an automatic disable (410 or failing), which is how a merchant says
 * "fixed"; disabling records that the merchant did it.
 */
export async function putEndpoint(
  em: EntityManager,
  cipher: PiiCipher,
  brandId: number,
  input: { url: string; events: WebhookEventName[]; enabled: boolean },
  opts: { allowPrivate: boolean },
): Promise<{ endpoint: EndpointView; created: boolean; secret: string | null }> {
  await assertUrlAllowed(input.url, opts.allowPrivate);
  const secret = generateWebhookSecret();
  const [row] = await em.execute<Array<EndpointRow & { inserted: boolean }>>(
    `INSERT INTO webhook_endpoints (brand_id, url, events, enabled, secret_encrypted, disabled_reason, disabled_at)
     VALUES (?, ?, ARRAY(SELECT jsonb_array_elements_text(?::jsonb)), ?, ?, CASE WHEN ? THEN NULL ELSE 'merchant' END, CASE WHEN ? THEN NULL ELSE now() END)
     ON CONFLICT (brand_id) DO UPDATE SET
       url = EXCLUDED.url,
       events = EXCLUDED.events,
       enabled = EXCLUDED.enabled,
       disabled_reason = CASE WHEN EXCLUDED.enabled THEN NULL
                              WHEN webhook_endpoints.enabled THEN 'merchant'
                              ELSE webhook_endpoints.disabled_reason END,
       disabled_at = CASE WHEN EXCLUDED.enabled THEN NULL
                          WHEN webhook_endpoints.enabled THEN now()
                          ELSE webhook_endpoints.disabled_at END,
       failing_since = CASE WHEN EXCLUDED.enabled AND NOT webhook_endpoints.enabled THEN NULL
                            ELSE webhook_endpoints.failing_since END,
       updated_at = now()
     RETURNING *, (xmax = 0) AS inserted`,
    [brandId, input.url, JSON.stringify([...new Set(input.events)]), input.enabled, cipher.encryptUnbound(secret, secretContext(brandId)), input.enabled, input.enabled],
  );
  return { endpoint: toView(row!), created: row!.inserted, secret: row!.inserted ? secret : null };
}

/**
 * Issues a new secret (returned once). The old one keeps signing for 24 hours, so
 * a delivery carries one `v1` per live secret and receivers holding either verify.
 */
export async function rotateSecret(
  em: EntityManager,
  cipher: PiiCipher,
  brandId: number,
  now = new Date(),
): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
  return em.transactional(async (tx) => {
    const [row] = await tx.execute<EndpointRow[]>('SELECT * FROM webhook_endpoints WHERE brand_id = ? FOR UPDATE', [brandId]);
    if (!row) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    const expiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    const previous = [...liveSecrets(row, now), { secret: row.secret_encrypted, expires_at: expiresAt.toISOString() }].slice(-MAX_PREVIOUS_SECRETS);
    const secret = generateWebhookSecret();
    await tx.execute(
      'UPDATE webhook_endpoints SET secret_encrypted = ?, previous_secrets = ?::jsonb, updated_at = now() WHERE id = ?',
      [cipher.encryptUnbound(secret, secretContext(brandId)), JSON.stringify(previous), row.id],
    );
    return { secret, previousSecretExpiresAt: expiresAt };
  });
}
