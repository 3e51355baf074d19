import { ContractNoBody, isAppRoute, type AppRoute, type AppRouter, type SchemaInputOrType, type SchemaOutputOrType } from '@ts-rest/core';
import type { HttpCore, RequestOptions } from './http.ts';
import { sdkNames } from './naming.ts';
import { paginate, type Page, type PageMetaLike } from './pagination.ts';
import { RESPONSE_META, withMeta, type ResponseMeta } from './response-meta.ts';

/*
 * Turns a ts-rest router into SDK namespaces: every route becomes a method, at
 * run time by walking the contract object and at compile time by mapping its
 * type, so a route added to the contract appears in the SDK with no SDK change.
 *
 * Call shape, stripe-style: path parameters first, in path order; then the
 * body (mutations) or the query (GET); then request options.
 *   client.payments.get(paymentId)
 *   client.payments.create({ amount: '10.00', ... }, { idempotencyKey })
 *   client.refunds.list({ per_page: 50 })
 */

type SuccessStatus = 200 | 201 | 202 | 203 | 204;
type ResponseSchema<T> = T extends { contentType: string; body: infer B } ? B : T;

/** The 2xx body type(s) of a route, as the server sends them. */
type SuccessBody<R extends AppRoute> = {
  [S in keyof R['responses'] & SuccessStatus]: SchemaOutputOrType<ResponseSchema<R['responses'][S]>>;
}[keyof R['responses'] & SuccessStatus];

/** The envelope unwrapped: `data`, or `{ data, meta }` for lists. */
type Unwrap<B> = B extends { success: true; data: infer D; meta: infer M }
  ? Page<D extends ReadonlyArray<infer I> ? I : D, M>
  : B extends { success: true; data: infer D }
    ? D
    : B extends undefined
      ? void
      : B;

export type RouteResult<R extends AppRoute> = Unwrap<SuccessBody<R>>;

/**
 * Query values may be given as the strings that travel in the URL or as the
 * values they stand for (`per_page: 50` as well as `'50'`).
 */
type LooseQuery<I, O> = {
  [K in keyof I]: I[K] | (K extends keyof O ? Extract<O[K], string | number | boolean> : never);
};

type QueryInput<R extends AppRoute> = R extends { query: infer Q }
  ? Q extends null | undefined
    ? never
    : LooseQuery<SchemaInputOrType<Q>, SchemaOutputOrType<Q>>
  : never;

type BodyInput<R extends AppRoute> = R extends { body: infer B } ? (B extends typeof ContractNoBody | null ? never : SchemaInputOrType<B>) : never;

/** The object argument: the body of a mutation, the query of a GET. */
export type RouteParams<R extends AppRoute> = R['method'] extends 'GET' ? QueryInput<R> : BodyInput<R>;

type PathParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? [Name, ...PathParamNames<Rest>]
  : P extends `${string}:${infer Name}`
    ? [Name]
    : [];

type PathValue = string | number;
/** Labelled positional arguments for the path parameters (labels show in editors). */
type PathArgs<N extends unknown[]> = N extends []
  ? []
  : N extends [unknown]
    ? [id: PathValue]
    : N extends [unknown, unknown]
      ? [parentId: PathValue, id: PathValue]
      : { [K in keyof N]: PathValue };

type ParamsArgs<P, O> = [P] extends [never]
  ? [options?: O]
  : undefined extends P
    ? [params?: P, options?: O]
    : Partial<P> extends P
      ? [params?: P, options?: O]
      : [params: P, options?: O];

export type RouteArgs<R extends AppRoute, O = RequestOptions> = [...PathArgs<PathParamNames<R['path']>>, ...ParamsArgs<RouteParams<R>, O>];

/** Lists with `page`/`per_page` also iterate, page by page or item by item. */
export interface Paginated<P, I, M, O> {
  /** `for await (const page of list.pages({ per_page: 50 }))`: each page `{ data, meta }`, from `page` (default 1) to the last. */
  pages(params?: P, options?: O): AsyncIterable<Page<I, M>>;
  /** `for await (const item of list.items())`: every item of every page, fetched a page at a time. */
  items(params?: P, options?: O): AsyncIterable<I>;
}

export type RouteMethod<R extends AppRoute, O = RequestOptions> = ((...args: RouteArgs<R, O>) => Promise<RouteResult<R>>) &
  (RouteResult<R> extends Page<infer I, infer M>
    ? 'page' extends keyof RouteParams<R>
      ? Paginated<RouteParams<R>, I, M, O>
      : unknown
    : unknown);

/** Namespaces mirroring the router: `contract.merchant.refunds.list` → `client.refunds.list`. */
export type Resources<T extends AppRouter, O = RequestOptions> = {
  [K in keyof T]: T[K] extends AppRoute ? RouteMethod<T[K], O> : T[K] extends AppRouter ? Resources<T[K], O> : never;
};

/** What a method hands to its SDK: the route and the call's pieces, not yet HTTP. */
export interface RouteCall<O = RequestOptions> {
  route: AppRoute;
  /** Dotted name for messages, e.g. `payments.get`. */
  name: string;
  path: string;
  query?: Record<string, unknown>;
  body?: unknown;
  options: O;
}

/** Sends a call and resolves with the raw success body (the SDK's auth lives here). */
export type Invoker<O> = (call: RouteCall<O>) => Promise<unknown>;

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

/** Top-level keys of a zod object schema (through optional/nullable/default/pipe wrappers). */
export function schemaKeys(schema: unknown): string[] {
  let s = schema as { _zod?: { def?: Record<string, unknown> } } | undefined;
  for (let depth = 0; s?._zod?.def && depth < 10; depth++) {
    const def = s._zod.def;
    if (def.type === 'object') return Object.keys(def.shape as object);
    s = (def.innerType ?? def.in) as typeof s;
  }
  return [];
}

function takesBody(route: AppRoute): boolean {
  if (route.method === 'GET') return false;
  const body = (route as { body?: unknown }).body;
  return body !== undefined && body !== null && body !== ContractNoBody;
}

function takesParams(route: AppRoute): boolean {
  return route.method === 'GET' ? route.query !== undefined && route.query !== null : takesBody(route);
}

/** `data` (or `{ data, meta }` for lists), carrying the response metadata as `lastResponse` when it is an object. */
export function unwrapEnvelope(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || (body as { success?: unknown }).success !== true) return body;
  const env = body as { data?: unknown; meta?: unknown; [RESPONSE_META]?: ResponseMeta };
  return withMeta('meta' in env ? { data: env.data, meta: env.meta } : env.data, env[RESPONSE_META]);
}

export function makeMethod<O>(route: AppRoute, name: string, invoke: Invoker<O>) {
  const names = pathParamNames(route.path);
  const hasParams = takesParams(route);
  const call = (args: unknown[]): Promise<unknown> => {
    let path = route.path;
    names.forEach((param, i) => {
      const value = args[i];
      if ((typeof value !== 'string' && typeof value !== 'number') || value === '') {
        throw new TypeError(`${name}: argument ${i + 1} (${param}) must be a non-empty string or number`);
      }
      path = path.replace(`:${param}`, encodeURIComponent(String(value)));
    });
    const rest = args.slice(names.length);
    const params = hasParams ? rest[0] : undefined;
    const options = ((hasParams ? rest[1] : rest[0]) ?? {}) as O;
    if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
      throw new TypeError(`${name}: ${route.method === 'GET' ? 'query' : 'body'} must be an object`);
    }
    return invoke({
      route,
      name,
      path,
      query: route.method === 'GET' ? (params as Record<string, unknown> | undefined) : undefined,
      body: route.method === 'GET' ? undefined : params,
      options,
    }).then(unwrapEnvelope);
  };
  const method = (...args: unknown[]) => {
    try {
      return call(args);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  if (route.method === 'GET' && schemaKeys(route.query).includes('page')) {
    const fetchPage = (pathArgs: unknown[], params: Record<string, unknown>, options: O | undefined) =>
      method(...pathArgs, params, options) as Promise<Page<unknown, PageMetaLike>>;
    Object.assign(method, {
      pages: (...args: unknown[]) => paginate((p, o) => fetchPage(args.slice(0, names.length), p, o), args[names.length] as Record<string, unknown>, args[names.length + 1] as O),
      items: (...args: unknown[]) => {
        const pages = paginate((p, o) => fetchPage(args.slice(0, names.length), p, o), args[names.length] as Record<string, unknown>, args[names.length + 1] as O);
        return (async function* () {
          for await (const page of pages) yield* page.data;
        })();
      },
    });
  }
  return method;
}

/** Builds the namespaces of a router at run time; the type is `Resources<T, O>`. */
export function buildResources<T extends AppRouter, O = RequestOptions>(router: T, invoke: Invoker<O>, prefix = ''): Resources<T, O> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(router)) {
    const name = prefix ? `${prefix}.${key}` : key;
    out[key] = isAppRoute(value) ? makeMethod(value, name, invoke) : buildResources(value as AppRouter, invoke, name);
  }
  return out as Resources<T, O>;
}

/**
 * The namespaces under the SDK's names (`naming.ts`): `payments.retrieve`,
 * `webhookEndpoints.update`, with each differing contract name kept as an alias
 * pointing at the same method.
 */
export function buildNamedResources<O = RequestOptions>(router: AppRouter, invoke: Invoker<O>): Record<string, Record<string, unknown>> {
  const routes = listRoutes(router);
  const names = sdkNames(routes);
  const out: Record<string, Record<string, unknown>> = {};
  const put = (dotted: string, value: unknown) => {
    const parts = dotted.split('.');
    const key = parts.pop()!;
    let node: Record<string, unknown> = out;
    for (const p of parts) node = (node[p] ??= {}) as Record<string, unknown>;
    node[key] = value;
  };
  for (const { name, route } of routes) {
    const sdk = names.get(name)!;
    const method = makeMethod(route, sdk.name, invoke);
    put(sdk.name, method);
    if (sdk.alias) put(sdk.alias, method);
  }
  return out;
}

/** Every route of a router with its dotted name, for SDKs that look routes up by metadata. */
export function listRoutes(router: AppRouter, prefix = ''): Array<{ name: string; route: AppRoute }> {
  return Object.entries(router).flatMap(([key, value]) => {
    const name = prefix ? `${prefix}.${key}` : key;
    return isAppRoute(value) ? [{ name, route: value }] : listRoutes(value as AppRouter, name);
  });
}

/**
 * The plain invoker: the route's credentials (from `headersFor`, which reads the
 * route metadata) plus the call, sent through the shared core.
 */
export function routeInvoker<O extends RequestOptions>(core: HttpCore, headersFor: (route: AppRoute) => Record<string, string>): Invoker<O> {
  return async (call) => {
    const res = await core.send({ route: call.route, path: call.path, query: call.query, body: call.body, headers: headersFor(call.route), options: call.options });
    return res.body;
  };
}
