import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/common/mode.ts';
import type { WebhookEventName } from '../../../contract/events.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import type { EntityManager } from '../../infra/database/orm.ts';
import { checkUrl, SsrfError } from '../../infra/http/ssrf.ts';
import { toDate, toDateStrict } from './rows.ts';
import { generateWebhookSecret } from './signature.ts';

/** A rotated-out secret keeps signing this long, so receivers can switch without losing deliveries. */
const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
/** Rotations inside the overlap stack up; beyond this many old secrets the oldest stops signing at once. */
const MAX_PREVIOUS_SECRETS = 4;
/**
 * Endpoints per brand, both modes together (Stripe's number). Each one multiplies
 * every event into a delivery and outbound requests, so the count is bounded.
 */
export const MAX_ENDPOINTS_PER_BRAND = 16;

export type DisabledReason = 'merchant' | 'gone' | 'failing';

export interface EndpointView {
  id: number;
  /** The only mode whose events it receives, or null: both (set through the singular route). */
  mode: Mode | null;
  url: string;
  description: string;
  events: WebhookEventName[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  disabledAt: Date | null;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  consecutiveFailures: number;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

interface EndpointRow {
  id: string | number;
  brand_id: string | number;
  mode: Mode | null;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  secret_encrypted: string;
  previous_secrets: Array<{ secret: string; expires_at: string }>;
  disabled_reason: DisabledReason | null;
  disabled_at: string | Date | null;
  failing_since: string | Date | null;
  last_success_at: string | Date | null;
  last_failure_at: string | Date | null;
  consecutive_failures: number;
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
    id: Number(row.id),
    mode: row.mode,
    url: row.url,
    description: row.description,
    events: row.events as WebhookEventName[],
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: toDate(row.disabled_at),
    failingSince: toDate(row.failing_since),
    lastSuccessAt: toDate(row.last_success_at),
    lastFailureAt: toDate(row.last_failure_at),
    consecutiveFailures: row.consecutive_failures,
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

/** A key sees the endpoints of its own mode and the both-modes one(s). */
const VISIBLE = 'brand_id = ? AND (mode IS NULL OR mode = ?)';

export async function listEndpoints(em: EntityManager, brandId: number, mode: Mode): Promise<EndpointView[]> {
  const rows = await em.execute<EndpointRow[]>(`SELECT * FROM webhook_endpoints WHERE ${VISIBLE} ORDER BY id`, [brandId, mode]);
  return rows.map((r) => toView(r));
}

async function findRow(em: EntityManager, brandId: number, mode: Mode, id: number | null, lock = ''): Promise<EndpointRow> {
  // id null: the singular routes' alias, the brand's first endpoint the key sees.
  const [row] = await em.execute<EndpointRow[]>(
    `SELECT * FROM webhook_endpoints WHERE ${VISIBLE} AND (?::bigint IS NULL OR id = ?::bigint) ORDER BY id LIMIT 1 ${lock}`,
    [brandId, mode, id, id],
  );
  if (!row) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
  return row;
}

/** One endpoint by id, or with id null the brand's default (first) one; another brand's or mode's is not found. */
export async function getEndpoint(em: EntityManager, brandId: number, mode: Mode, id: number | null = null): Promise<EndpointView> {
  return toView(await findRow(em, brandId, mode, id));
}

/** The configuration-time SSRF check: a URL whose host resolves to a non-public address is refused. */
async function assertUrlAllowed(url: string, allowPrivate: boolean): Promise<void> {
  try {
    await checkUrl(url, { allowPrivate });
  } catch (err) {
    if (err instanceof SsrfError) throw new AppError('WEBHOOK_URL_NOT_ALLOWED', err.message, { field: 'url' });
    throw err;
  }
}

interface EndpointInput {
  url: string;
  events: WebhookEventName[];
  enabled: boolean;
  description?: string;
}

/** Inserts under the brand row lock, so two concurrent creates cannot pass the cap together. */
async function insertEndpoint(tx: EntityManager, cipher: PiiCipher, brandId: number, mode: Mode | null, input: EndpointInput) {
  await tx.execute('SELECT id FROM brands WHERE id = ? FOR UPDATE', [brandId]);
  const [{ n }] = (await tx.execute<Array<{ n: string }>>('SELECT count(*) AS n FROM webhook_endpoints WHERE brand_id = ?', [brandId])) as [{ n: string }];
  if (Number(n) >= MAX_ENDPOINTS_PER_BRAND) {
    throw new AppError('WEBHOOK_ENDPOINT_LIMIT_REACHED', `A brand has at most ${MAX_ENDPOINTS_PER_BRAND} webhook endpoints; delete one first`);
  }
  const secret = generateWebhookSecret();
  const [row] = await tx.execute<EndpointRow[]>(
    `INSERT INTO webhook_endpoints (brand_id, mode, url, description, events, enabled, secret_encrypted, disabled_reason, disabled_at)
     VALUES (?, ?, ?, ?, ARRAY(SELECT jsonb_array_elements_text(?::jsonb)), ?, ?, CASE WHEN ? THEN NULL ELSE 'merchant' END, CASE WHEN ? THEN NULL ELSE now() END)
     RETURNING *`,
    [brandId, mode, input.url, input.description ?? '', JSON.stringify([...new Set(input.events)]), input.enabled,
      cipher.encryptUnbound(secret, secretContext(brandId)), input.enabled, input.enabled],
  );
  return { endpoint: toView(row!), secret };
}

/**
 * Changes the given fields. Enabling clears an automatic disable (410 or
 * failing) and the failure streak, which is how a merchant says "fixed";
 * disabling records that the merchant did it. The secret is kept.
 */
async function updateRow(tx: EntityManager, row: EndpointRow, patch: Partial<EndpointInput>): Promise<EndpointView> {
  const enabled = patch.enabled ?? null;
  const events = patch.events ? JSON.stringify([...new Set(patch.events)]) : null;
  const [updated] = await tx.execute<EndpointRow[]>(
    `UPDATE webhook_endpoints SET
       url = COALESCE(?, url),
       description = COALESCE(?, description),
       events = CASE WHEN ?::jsonb IS NULL THEN events ELSE ARRAY(SELECT jsonb_array_elements_text(?::jsonb)) END,
       enabled = COALESCE(?::boolean, enabled),
       disabled_reason = CASE WHEN ?::boolean IS NULL THEN disabled_reason WHEN ?::boolean THEN NULL
                              WHEN enabled THEN 'merchant' ELSE disabled_reason END,
       disabled_at = CASE WHEN ?::boolean IS NULL THEN disabled_at WHEN ?::boolean THEN NULL
                          WHEN enabled THEN now() ELSE disabled_at END,
       failing_since = CASE WHEN ?::boolean AND NOT enabled THEN NULL ELSE failing_since END,
       consecutive_failures = CASE WHEN ?::boolean AND NOT enabled THEN 0 ELSE consecutive_failures END,
       updated_at = now()
     WHERE id = ? RETURNING *`,
    [
      patch.url ?? null, patch.description ?? null, events, events,
      enabled, enabled, enabled, enabled, enabled, enabled, enabled, row.id,
    ],
  );
  return toView(updated!);
}

/** A new endpoint of the calling key's mode; its signing secret is returned this once. */
export async function createEndpoint(
  em: EntityManager,
  cipher: PiiCipher,
  scope: { brandId: number; mode: Mode },
  input: EndpointInput,
  opts: { allowPrivate: boolean },
): Promise<{ endpoint: EndpointView; secret: string }> {
  await assertUrlAllowed(input.url, opts.allowPrivate);
  return em.transactional((tx) => insertEndpoint(tx, cipher, scope.brandId, scope.mode, input));
}

export async function updateEndpoint(
  em: EntityManager,
  scope: { brandId: number; mode: Mode },
  id: number,
  patch: Partial<EndpointInput>,
  opts: { allowPrivate: boolean },
): Promise<EndpointView> {
  if (patch.url !== undefined) await assertUrlAllowed(patch.url, opts.allowPrivate);
  return em.transactional(async (tx) => updateRow(tx, await findRow(tx, scope.brandId, scope.mode, id, 'FOR UPDATE'), patch));
}

/**
 * Deletes the endpoint. Its delivery log stays (the rows lose the endpoint);
 * deliveries not yet finished become dead letters now, since nothing can send
 * them any more.
 */
export async function deleteEndpoint(em: EntityManager, scope: { brandId: number; mode: Mode }, id: number): Promise<EndpointView> {
  return em.transactional(async (tx) => {
    const row = await findRow(tx, scope.brandId, scope.mode, id, 'FOR UPDATE');
    await tx.execute(
      `UPDATE webhook_deliveries SET status = 'dead_letter', dead_lettered_at = now(), next_attempt_at = NULL,
              last_error = 'endpoint deleted', lease_token = NULL, lease_until = NULL, updated_at = now()
        WHERE endpoint_id = ? AND status IN ('pending', 'retrying')`,
      [row.id],
    );
    await tx.execute('DELETE FROM webhook_endpoints WHERE id = ?', [row.id]);
    return toView(row);
  });
}

/**
 * The singular route: creates the brand's first endpoint (receiving both modes,
 * as it always has; its secret returned once) when the key sees none, or
 * replaces URL, events and enabled flag of the default one (the secret is kept).
 */
export async function putEndpoint(
  em: EntityManager,
  cipher: PiiCipher,
  scope: { brandId: number; mode: Mode },
  input: EndpointInput,
  opts: { allowPrivate: boolean },
): Promise<{ endpoint: EndpointView; created: boolean; secret: string | null }> {
  await assertUrlAllowed(input.url, opts.allowPrivate);
  return em.transactional(async (tx) => {
    // The brand lock first (as insertEndpoint takes it): two first PUTs racing
    // create one endpoint, the second replaces it.
    await tx.execute('SELECT id FROM brands WHERE id = ? FOR UPDATE', [scope.brandId]);
    const row = await findRow(tx, scope.brandId, scope.mode, null, 'FOR UPDATE').catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'WEBHOOK_ENDPOINT_NOT_FOUND') return null;
      throw err;
    });
    if (row) return { endpoint: await updateRow(tx, row, input), created: false, secret: null };
    const made = await insertEndpoint(tx, cipher, scope.brandId, null, input);
    return { endpoint: made.endpoint, created: true, secret: made.secret };
  });
}

/**
 * Issues a new secret (returned once). The old one keeps signing for 24 hours, so
 * a delivery carries one `v1` per live secret and receivers holding either verify.
 * `id` null: the default endpoint (singular route).
 */
export async function rotateSecret(
  em: EntityManager,
  cipher: PiiCipher,
  scope: { brandId: number; mode: Mode },
  id: number | null = null,
  now = new Date(),
): Promise<{ secret: string; previousSecretExpiresAt: Date; endpointId: number }> {
  return em.transactional(async (tx) => {
    const row = await findRow(tx, scope.brandId, scope.mode, id, 'FOR UPDATE');
    const expiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    const previous = [...liveSecrets(row, now), { secret: row.secret_encrypted, expires_at: expiresAt.toISOString() }].slice(-MAX_PREVIOUS_SECRETS);
    const secret = generateWebhookSecret();
    await tx.execute(
      'UPDATE webhook_endpoints SET secret_encrypted = ?, previous_secrets = ?::jsonb, updated_at = now() WHERE id = ?',
      [cipher.encryptUnbound(secret, secretContext(scope.brandId)), JSON.stringify(previous), row.id],
    );
    return { secret, previousSecretExpiresAt: expiresAt, endpointId: Number(row.id) };
  });
}

/** Locks the endpoint a test event goes to; not found and disabled are refused. */
export async function endpointForTest(tx: EntityManager, scope: { brandId: number; mode: Mode }, id: number | null): Promise<number> {
  const row = await findRow(tx, scope.brandId, scope.mode, id, 'FOR SHARE');
  if (!row.enabled) throw new AppError('INVALID_STATE', 'The webhook endpoint is disabled: enable it first');
  return Number(row.id);
}
