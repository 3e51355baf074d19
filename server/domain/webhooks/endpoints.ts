import { AppError } from '../../../contract/common/errors.ts';
import type { Mode, WebhookEventName, WebhookSigning } from '../../../contract/vocabulary.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { checkUrl, SsrfError } from '../../infra/http/ssrf.ts';
import { transaction, type Db } from '../db.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import { generateWebhookSecret } from './signature.ts';
import {
  countBrandEndpoints,
  lockBrandEndpoint,
  selectBrandEndpoints,
  deleteEndpointRow,
  insertEndpointRow,
  lockBrandRow,
  selectEndpointOfMode,
  selectEndpointsOfMode,
  selectTestTarget,
  storeSecrets,
  updateEndpointRow,
  type EndpointRow,
} from './queries/endpoints.ts';

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
  signing: WebhookSigning;
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


/** AAD context: a secret copied into another brand's row does not decrypt. */
export const secretContext = (brandId: number | string) => `webhook_endpoint.secret:brand:${brandId}`;

function liveSecrets(row: Pick<EndpointRow, 'previous_secrets'>, now: Date) {
  return row.previous_secrets.filter((p) => Date.parse(p.expires_at) > now.getTime());
}

function toView(row: EndpointRow, now = new Date()): EndpointView {
  const live = liveSecrets(row, now).map((p) => Date.parse(p.expires_at));
  return {
    id: row.id,
    mode: row.mode,
    url: row.url,
    description: row.description,
    events: row.events as WebhookEventName[],
    enabled: row.enabled,
    signing: row.signing,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    failingSince: row.failing_since,
    lastSuccessAt: row.last_success_at,
    lastFailureAt: row.last_failure_at,
    consecutiveFailures: row.consecutive_failures,
    previousSecretExpiresAt: live.length ? new Date(Math.max(...live)) : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Every secret that signs a delivery now: the current one first, then rotated-out
 * ones still inside their overlap. One `v1` goes out per secret.
 */
export function signingSecrets(cipher: PiiCipher, row: { brand_id: number | string; secret_encrypted: string; previous_secrets: EndpointRow['previous_secrets'] }, now = new Date()): string[] {
  const context = secretContext(row.brand_id);
  return [row.secret_encrypted, ...liveSecrets(row, now).map((p) => p.secret)].map((token) => cipher.decryptUnbound(token, context));
}

/**
 * What a key of `mode` sees and manages: a test key only test endpoints; a live
 * key live ones and the both-modes one(s). A both-modes endpoint receives live
 * events, so it is a live object: a test key can neither read, change, rotate,
 * disable nor delete it (it answers as not found), nor learn its URL.
 */
export async function listEndpoints(em: Db, brandId: number, mode: Mode): Promise<EndpointView[]> {
  const rows = await selectEndpointsOfMode(em, brandId, mode);
  return rows.map((r) => toView(r));
}

async function findRow(em: Db, brandId: number, mode: Mode, id: number | null, lock?: 'FOR UPDATE' | 'FOR SHARE'): Promise<EndpointRow> {
  // id null: the singular routes' alias, the brand's first endpoint the key sees.
  const row = await selectEndpointOfMode(em, brandId, mode, id, lock);
  if (!row) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
  return row;
}

/** The brand row lock that serialises endpoint creation (the per-brand cap). */
async function lockBrand(tx: Db, brandId: number): Promise<void> {
  await lockBrandRow(tx, brandId);
}

/** One endpoint by id, or with id null the brand's default (first) one; another brand's or mode's is not found. */
export async function getEndpoint(em: Db, brandId: number, mode: Mode, id: number | null = null): Promise<EndpointView> {
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
  signing?: WebhookSigning;
}

/** Inserts under the brand row lock, so two concurrent creates cannot pass the cap together. */
async function insertEndpoint(tx: Db, cipher: PiiCipher, brandId: number, mode: Mode | null, input: EndpointInput) {
  await lockBrand(tx, brandId);
  if ((await countBrandEndpoints(tx, brandId)) >= MAX_ENDPOINTS_PER_BRAND) {
    throw new AppError('WEBHOOK_ENDPOINT_LIMIT_REACHED', `A brand has at most ${MAX_ENDPOINTS_PER_BRAND} webhook endpoints; delete one first`);
  }
  const secret = generateWebhookSecret();
  const row = await insertEndpointRow(tx, {
    brand_id: brandId,
    mode,
    url: input.url,
    description: input.description ?? '',
    events: [...new Set(input.events)],
    enabled: input.enabled,
    signing: input.signing ?? 'paycollect',
    secret_encrypted: cipher.encryptUnbound(secret, secretContext(brandId)),
    disabled_reason: input.enabled ? null : 'merchant',
  });
  return { endpoint: toView(row), secret };
}

/**
 * Changes the given fields. Enabling clears an automatic disable (410 or
 * failing) and the failure streak, which is how a merchant says "fixed";
 * disabling records that the merchant did it. The secret is kept.
 */
async function updateRow(tx: Db, row: EndpointRow, patch: Partial<EndpointInput>): Promise<EndpointView> {
  // `row` was read FOR UPDATE in this transaction, so its `enabled` is the one
  // the update sees: the transitions are decided here instead of in CASEs.
  const enabling = patch.enabled === true && !row.enabled;
  const disabling = patch.enabled === false && row.enabled;
  const updated = await updateEndpointRow(tx, row.id, patch, { enabling, disabling });
  return toView(updated);
}

/** A new endpoint of the calling key's mode; its signing secret is returned this once. */
export async function createEndpoint(
  em: Db,
  cipher: PiiCipher,
  scope: { brandId: number; mode: Mode },
  input: EndpointInput,
  opts: { allowPrivate: boolean },
): Promise<{ endpoint: EndpointView; secret: string }> {
  await assertUrlAllowed(input.url, opts.allowPrivate);
  return transaction(em, (tx) => insertEndpoint(tx, cipher, scope.brandId, scope.mode, input));
}

export async function updateEndpoint(
  em: Db,
  scope: { brandId: number; mode: Mode },
  id: number,
  patch: Partial<EndpointInput>,
  opts: { allowPrivate: boolean },
): Promise<EndpointView> {
  if (patch.url !== undefined) await assertUrlAllowed(patch.url, opts.allowPrivate);
  return transaction(em, async (tx) => updateRow(tx, await findRow(tx, scope.brandId, scope.mode, id, 'FOR UPDATE'), patch));
}

/**
 * Deletes the endpoint. Its delivery log stays (the rows lose the endpoint);
 * deliveries not yet finished become dead letters now, since nothing can send
 * them any more.
 */
export async function deleteEndpoint(em: Db, scope: { brandId: number; mode: Mode }, id: number): Promise<EndpointView> {
  return transaction(em, async (tx) => {
    const row = await findRow(tx, scope.brandId, scope.mode, id, 'FOR UPDATE');
    await deleteEndpointRow(tx, row.id);
    return toView(row);
  });
}

/**
 * The singular route: creates the key's first endpoint when it sees none (its
 * secret returned once): with a live key one receiving both modes, as it always
 * has; with a test key a test endpoint, since a test key must never set up what
 * receives live events. Otherwise it replaces URL, events and enabled flag of the
 * default one (the secret is kept).
 */
export async function putEndpoint(
  em: Db,
  cipher: PiiCipher,
  scope: { brandId: number; mode: Mode },
  input: EndpointInput,
  opts: { allowPrivate: boolean },
): Promise<{ endpoint: EndpointView; created: boolean; secret: string | null }> {
  await assertUrlAllowed(input.url, opts.allowPrivate);
  return transaction(em, async (tx) => {
    // The brand lock first (as insertEndpoint takes it): two first PUTs racing
    // create one endpoint, the second replaces it.
    await lockBrand(tx, scope.brandId);
    const row = await findRow(tx, scope.brandId, scope.mode, null, 'FOR UPDATE').catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'WEBHOOK_ENDPOINT_NOT_FOUND') return null;
      throw err;
    });
    if (row) return { endpoint: await updateRow(tx, row, input), created: false, secret: null };
    const made = await insertEndpoint(tx, cipher, scope.brandId, scope.mode === 'test' ? 'test' : null, input);
    return { endpoint: made.endpoint, created: true, secret: made.secret };
  });
}

/**
 * Issues a new secret (returned once). The old one keeps signing for 24 hours, so
 * a delivery carries one `v1` per live secret and receivers holding either verify.
 * `id` null: the default endpoint (singular route).
 */
export async function rotateSecret(
  em: Db,
  cipher: PiiCipher,
  scope: { brandId: number; mode: Mode },
  id: number | null = null,
  now = new Date(),
): Promise<{ secret: string; previousSecretExpiresAt: Date; endpointId: number }> {
  return transaction(em, async (tx) => {
    const row = await findRow(tx, scope.brandId, scope.mode, id, 'FOR UPDATE');
    const expiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    const previous = [...liveSecrets(row, now), { secret: row.secret_encrypted, expires_at: expiresAt.toISOString() }].slice(-MAX_PREVIOUS_SECRETS);
    const secret = generateWebhookSecret();
    await storeSecrets(tx, row.id, cipher.encryptUnbound(secret, secretContext(scope.brandId)), previous);
    return { secret, previousSecretExpiresAt: expiresAt, endpointId: row.id };
  });
}

/**
 * Locks the endpoint a test event goes to; not found and disabled are refused.
 * A sample of `mode` may go wherever that mode's real events go (an endpoint of
 * the mode, or a both-modes one): sending it changes nothing there.
 */
export async function endpointForTest(tx: Db, scope: { brandId: number; mode: Mode }, id: number | null): Promise<number> {
  const row = await selectTestTarget(tx, scope, id);
  if (!row) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
  if (!row.enabled) throw new AppError('INVALID_STATE', 'The webhook endpoint is disabled: enable it first');
  return row.id;
}

/** The admin's view: every endpoint of the brand, both modes, oldest first (no secrets). */
export async function listBrandEndpoints(em: Db, brandId: number): Promise<EndpointView[]> {
  return (await selectBrandEndpoints(em, brandId)).map((r) => toView(r));
}

/**
 * An operator sets how an endpoint's deliveries are signed and shaped (for a
 * merchant moving an OwnPay plugin over); recorded in the audit log when it changes.
 */
export async function setEndpointSigningAudited(em: Db, who: AuditActor, brandId: number, id: number, signing: WebhookSigning): Promise<EndpointView> {
  return withAudit(em, who, async (tx) => {
    const row = await lockBrandEndpoint(tx, brandId, id);
    if (!row) throw new AppError('WEBHOOK_ENDPOINT_NOT_FOUND');
    if (row.signing === signing) return { result: toView(row), audit: null };
    const updated = await updateRow(tx, row, { signing });
    return {
      result: updated,
      audit: { action: 'webhook_endpoint.signing', targetType: 'webhook_endpoint', targetId: id, brandId, before: { signing: row.signing }, after: { signing } },
    };
  });
}
