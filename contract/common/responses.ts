import { isAppRoute, isAppRouteNoBody, type AppRoute, type AppRouter, type ContractNoBodyType } from '@ts-rest/core';
import { z } from 'zod';
import { errorRegistry, type ErrorCode } from './errors.ts';
import { errorEnvelopeSchema } from './envelope.ts';
import type { RouteMeta } from './meta.ts';

/**
 * Per-status error responses, built from the codes a route declares (Unkey's
 * per-status error schemas): a route lists the codes of its own in
 * `meta({ errors })`, once; the codes every route of its surface can answer are
 * added here; and each HTTP status gets an error envelope whose `code` is the
 * enum of exactly that route's codes for that status. The server checks its
 * answers against these schemas, and the OpenAPI document and the SDK types
 * show them, so a code a route does not declare is caught rather than published.
 */

type Registry = typeof errorRegistry;
/** The HTTP status of a code, from the registry. */
export type StatusOf<C extends ErrorCode> = Registry[C]['status'];
type CodesWithStatus<C extends ErrorCode, S> = C extends ErrorCode ? (StatusOf<C> extends S ? C : never) : never;

/**
 * Codes every JSON route under `/api` can answer whatever it does: the body
 * parser runs before routing (malformed, too large, not JSON, unreadable), and
 * anything unexpected or a database outage. The body codes apply only to a
 * route that takes a body: the server does not read one on any other
 * (server/http/body.ts), so a GET never answers 413 or 415.
 */
export const apiSurfaceCodes = ['VALIDATION_ERROR', 'MALFORMED_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'] as const;
/** The surface codes only a route that reads a request body can answer. */
export const bodyCodes = ['MALFORMED_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const satisfies readonly ErrorCode[];
type BodyCode = (typeof bodyCodes)[number];
const bodyCodeSet = new Set<ErrorCode>(bodyCodes);

/** Whether a route takes a request body: GET routes have none, and `c.noBody()` says so explicitly. */
export function routeTakesBody(route: AppRoute): boolean {
  const body = 'body' in route ? (route as { body?: unknown }).body : undefined;
  return body !== undefined && body !== null && !isAppRouteNoBody(body as never);
}
type TakesBody<T> = T extends { body: infer B } ? ([B] extends [ContractNoBodyType] ? false : true) : false;
/** A route's surface codes: without the body codes when it takes no body. */
type SurfaceCodes<T, Base extends ErrorCode> = TakesBody<T> extends true ? Base : Exclude<Base, BodyCode>;
/** The probes outside `/api` read no body; readiness answers its own 503. */
export const probeSurfaceCodes = ['INTERNAL_ERROR'] as const;

const authenticated = new Set<string>(['merchant', 'device', 'admin', 'operator']);
/** Credentials a console session cookie can carry; it needs its CSRF token on every method but these. */
const sessionCredential = new Set<string>(['admin', 'operator']);
const safeMethods = new Set(['GET', 'HEAD']);
const limitedByDefault = new Set<string>(['merchant', 'device', 'pairing', 'device-refresh', 'checkout']);

/** A mutating method: a console session must send its CSRF token with it. */
type Mutating<Method> = Method extends 'GET' | 'HEAD' ? false : true;
/**
 * The credential's codes: any credential can be missing or wrong; an admin route
 * (every one has a permission, permissions.ts) refuses a role without it; a
 * console session calling a mutating method needs its CSRF token. Session
 * routes (`operator`) name no permission a signed-in operator lacks.
 */
type AuthCodes<M, Method> = M extends { auth: 'merchant' }
  ? 'UNAUTHORIZED' | 'INSUFFICIENT_SCOPE'
  : M extends { auth: 'device' }
  ? 'UNAUTHORIZED'
  : M extends { auth: 'admin' }
    ? 'UNAUTHORIZED' | 'FORBIDDEN' | (Mutating<Method> extends true ? 'CSRF_TOKEN_INVALID' : never)
    : M extends { auth: 'operator' }
      ? 'UNAUTHORIZED' | (Mutating<Method> extends true ? 'CSRF_TOKEN_INVALID' : never)
      : never;
/** Rate limited unless `rateLimit: false`; by default every credential kind but admin and none (meta.ts). */
type LimitCodes<M> = M extends { rateLimit: false }
  ? never
  : M extends { rateLimit: string }
    ? 'RATE_LIMITED'
    : M extends { auth: 'merchant' | 'device' | 'pairing' | 'device-refresh' | 'checkout' }
      ? 'RATE_LIMITED'
      : never;
type DeclaredCodes<M> = M extends { errors: readonly (infer C)[] } ? Extract<C, ErrorCode> : never;
/** Every code a route can answer: its surface's, its credential's and rate limit's, and its own. */
export type RouteErrorCodes<M, Base extends ErrorCode, Method = string> = Base | AuthCodes<M, Method> | LimitCodes<M> | DeclaredCodes<M>;

/** The codes of a route, in the order they are listed (surface, credential, limit, its own). */
export function routeErrorCodes(meta: RouteMeta | undefined, base: readonly ErrorCode[], method = 'GET', takesBody = true): ErrorCode[] {
  const m = meta ?? { auth: 'none' };
  const codes: ErrorCode[] = base.filter((c) => takesBody || !bodyCodeSet.has(c));
  if (authenticated.has(m.auth)) codes.push('UNAUTHORIZED');
  if (m.auth === 'merchant') codes.push('INSUFFICIENT_SCOPE');
  if (m.auth === 'admin' && m.permission !== undefined) codes.push('FORBIDDEN');
  if (sessionCredential.has(m.auth) && !safeMethods.has(method.toUpperCase())) codes.push('CSRF_TOKEN_INVALID');
  if (m.rateLimit !== false && (m.rateLimit !== undefined || limitedByDefault.has(m.auth))) codes.push('RATE_LIMITED');
  codes.push(...(m.errors ?? []));
  return [...new Set(codes)];
}

const itemShape = errorEnvelopeSchema.shape.errors.element.shape;

/** The error envelope whose items carry one of `codes` (all of one HTTP status). */
function buildEnvelope<C extends ErrorCode>(codes: readonly C[]) {
  return z.object({
    ...errorEnvelopeSchema.shape,
    errors: z
      .array(z.object({ ...itemShape, code: z.enum(codes as readonly [C, ...C[]]).describe('Machine-readable error code: one of those this operation answers with this status.') }))
      .min(1),
  });
}
export type ErrorEnvelopeSchema<C extends ErrorCode> = ReturnType<typeof buildEnvelope<C>>;

const envelopes = new Map<string, z.ZodType>();
const codesOfEnvelope = new WeakMap<object, readonly ErrorCode[]>();

/** The (shared) envelope schema for exactly these codes. */
export function errorEnvelopeFor<C extends ErrorCode>(codes: readonly C[]): ErrorEnvelopeSchema<C> {
  const key = [...codes].sort().join(',');
  let schema = envelopes.get(key);
  if (!schema) {
    schema = buildEnvelope(codes);
    envelopes.set(key, schema);
    codesOfEnvelope.set(schema, codes);
  }
  return schema as ErrorEnvelopeSchema<C>;
}

/** The codes an error response schema (or a union holding one) admits, or null for a schema of another kind. */
export function declaredErrorCodes(schema: unknown): readonly ErrorCode[] | null {
  if (!schema || typeof schema !== 'object') return null;
  const own = codesOfEnvelope.get(schema);
  if (own) return own;
  const options = (schema as { _zod?: { def?: { type?: string; options?: unknown[] } } })._zod?.def;
  if (options?.type !== 'union') return null;
  const found = (options.options ?? []).flatMap((o) => declaredErrorCodes(o) ?? []);
  return found.length ? found : null;
}

type ErrorResponses<C extends ErrorCode> = { [S in StatusOf<C>]: ErrorEnvelopeSchema<CodesWithStatus<C, S>> };
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type RouteWithErrors<T extends AppRoute, Base extends ErrorCode> = Simplify<
  Omit<T, 'responses'> & {
    responses: Simplify<
      Omit<T['responses'], StatusOf<RouteErrorCodes<T['metadata'], SurfaceCodes<T, Base>, T['method']>>> &
        ErrorResponses<RouteErrorCodes<T['metadata'], SurfaceCodes<T, Base>, T['method']>>
    >;
  }
>;
export type WithErrorResponses<R, Base extends ErrorCode> = {
  [K in keyof R]: R[K] extends AppRoute ? RouteWithErrors<R[K], Base> : R[K] extends AppRouter ? WithErrorResponses<R[K], Base> : R[K];
};

/**
 * Gives every route of a surface its error responses, one per status its codes
 * have. A route writes only its success responses (and a status whose body is
 * not just the envelope, like readiness's 503); the broad `errorEnvelopeSchema`
 * written by hand for a status none of its codes has is refused, since the
 * route could never answer it.
 */
export function withErrorResponses<R extends AppRouter, const Base extends readonly ErrorCode[]>(router: R, base: Base): WithErrorResponses<R, Base[number]> {
  const walk = (node: AppRouter | AppRoute, name: string): unknown => {
    if (!isAppRoute(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, name ? `${name}.${k}` : k)]));
    const codes = routeErrorCodes(node.metadata as RouteMeta | undefined, base, node.method, routeTakesBody(node));
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of codes) {
      const status = errorRegistry[code].status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    const responses: Record<number, unknown> = {};
    for (const [status, schema] of Object.entries(node.responses)) {
      if (Number(status) >= 400 && schema === errorEnvelopeSchema && !byStatus.has(Number(status))) {
        throw new Error(`${name} lists an error response ${status} that none of its codes has: declare the code in meta({ errors })`);
      }
      if (!byStatus.has(Number(status))) responses[Number(status)] = schema;
    }
    for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) responses[status] = errorEnvelopeFor(list);
    return { ...node, responses };
  };
  return walk(router, '') as WithErrorResponses<R, Base[number]>;
}
