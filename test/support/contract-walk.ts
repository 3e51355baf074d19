import { randomUUID } from 'node:crypto';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { z } from 'zod';
import { contract } from '../../contract/index.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';

/**
 * Walks the ts-rest contract object, so suites that must cover "every route"
 * pick up routes as they land instead of relying on a hand-written list, and
 * generates inputs from each route's own zod schemas.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Zod = z.ZodType;

export interface ContractRoute {
  /** Dotted name in the contract, e.g. `merchant.payments.create`. */
  name: string;
  method: Method;
  /** ts-rest path with `:params`. */
  path: string;
  meta: RouteMeta;
  /** Response schemas by status: each error status admits exactly the codes the route declares for it. */
  responses: Record<number, Zod>;
  pathParamNames: string[];
  body?: Zod;
  query?: Zod;
  pathParams?: Zod;
  headers?: Zod;
}

const isZod = (v: unknown): v is Zod => typeof v === 'object' && v !== null && '_zod' in v;

export function contractRoutes(router: AppRouter = contract): ContractRoute[] {
  const out: ContractRoute[] = [];
  const walk = (r: AppRouter | AppRoute, name: string[]) => {
    if (isAppRoute(r)) {
      const route = r as AppRoute & { body?: unknown };
      out.push({
        name: name.join('.'),
        method: route.method as Method,
        path: route.path,
        meta: (route.metadata ?? { auth: 'none' }) as RouteMeta,
        responses: route.responses as Record<number, Zod>,
        pathParamNames: [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!),
        body: isZod(route.body) ? route.body : undefined,
        query: isZod(route.query) ? route.query : undefined,
        pathParams: isZod(route.pathParams) ? route.pathParams : undefined,
        headers: isZod(route.headers) ? route.headers : undefined,
      });
      return;
    }
    for (const [k, v] of Object.entries(r)) walk(v as AppRouter | AppRoute, [...name, k]);
  };
  walk(router, []);
  return out;
}

/** The path with its parameters filled (each URL-encoded unless `raw`). */
export function fillPath(path: string, params: Record<string, string>, raw = false): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const v = params[name] ?? '1';
    return raw ? v : encodeURIComponent(v);
  });
}

export function accepts(schema: Zod | undefined, value: unknown): boolean {
  return schema ? schema.safeParse(value).success : value === undefined;
}

// ---------------------------------------------------------------------------
// Valid samples, from the schema's JSON Schema (zod's documented export), each
// checked against the zod schema itself (refinements included).

type Json = Record<string, any>;

function stringCandidates(s: Json): string[] {
  const future = new Date(Date.now() + 3600_000).toISOString();
  return [
    ...(Array.isArray(s.examples) ? s.examples.filter((e: unknown) => typeof e === 'string') : []),
    'Test value',
    'BDT',
    '100.00',
    '1',
    '10',
    '2026-01-01',
    future,
    randomUUID(),
    'https://example.com/hooks/payments',
    'user@example.com',
    '+8801712345678',
    '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    'bkash',
    'Test value',
    'sent',
    'USD',
  ];
}

function sampleString(s: Json): string {
  if (Array.isArray(s.enum)) return String(s.enum[0]);
  if (s.const !== undefined) return String(s.const);
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Infinity;
  const fits = (v: string) => v.length >= min && v.length <= max && (!s.pattern || new RegExp(s.pattern, 'u').test(v)) && formatFits(s.format, v);
  const found = stringCandidates(s).find(fits);
  if (found !== undefined) return found;
  return 'a'.repeat(Math.max(1, Math.min(min || 1, max)));
}

function formatFits(format: string | undefined, v: string): boolean {
  switch (format) {
    case 'uuid':
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(v);
    case 'date-time':
      return !Number.isNaN(Date.parse(v)) && v.includes('T');
    case 'date':
      return /^\d{4}-\d{2}-\d{2}$/.test(v);
    case 'uri':
      return /^https?:\/\//.test(v);
    case 'email':
      return v.includes('@');
    default:
      return true;
  }
}

function sampleNumber(s: Json, integer: boolean): number {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : undefined);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : undefined);
  for (const c of [1, 60, 100, 3600, 0]) if ((lo === undefined || c >= lo) && (hi === undefined || c <= hi)) return c;
  const v = lo ?? hi ?? 1;
  return integer ? Math.ceil(v) : v;
}

function resolve(s: Json, root: Json): Json {
  let cur = s;
  for (let i = 0; i < 10 && cur && typeof cur.$ref === 'string'; i++) {
    const name = cur.$ref.replace(/^#\/\$defs\//, '');
    cur = { ...root.$defs?.[name], ...Object.fromEntries(Object.entries(cur).filter(([k]) => k !== '$ref')) };
  }
  return cur;
}

function sampleJson(schema: Json, root: Json, depth = 0): unknown {
  const s = resolve(schema, root);
  if (depth > 8) return undefined;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const options = s.anyOf ?? s.oneOf;
  if (Array.isArray(options)) {
    for (const o of options) {
      const v = sampleJson(o, root, depth + 1);
      if (v !== undefined && v !== null) return v;
    }
    return sampleJson(options[0], root, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'string':
      return sampleString(s);
    case 'integer':
      return sampleNumber(s, true);
    case 'number':
      return sampleNumber(s, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const item = sampleJson(s.items ?? {}, root, depth + 1);
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => structuredClone(item));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
        const value = sampleJson(v, root, depth + 1);
        if (value !== undefined) out[k] = value;
      }
      return out;
    }
    default:
      return s.properties ? sampleJson({ ...s, type: 'object' }, root, depth) : undefined;
  }
}

export function jsonSchemaOf(schema: Zod): Json {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
}

/**
 * A value the zod schema accepts, or undefined when the generator cannot find
 * one. Optional fields are included when they keep the whole value valid
 * (more fields reached), dropped one by one otherwise (`expires_in` vs
 * `expires_at`-style refinements).
 */
export function sampleValid(schema: Zod): unknown {
  const root = jsonSchemaOf(schema);
  const full = sampleJson(root, root);
  if (accepts(schema, full)) return full;
  if (full && typeof full === 'object' && !Array.isArray(full)) {
    const obj = full as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const { [k]: _dropped, ...rest } = obj;
      if (accepts(schema, rest)) return rest;
    }
    const required = new Set<string>(resolve(root, root).required ?? []);
    const minimal = Object.fromEntries(Object.entries(obj).filter(([k]) => required.has(k)));
    if (accepts(schema, minimal)) return minimal;
  }
  return undefined;
}

/** The fields of an object schema (top level), with whether each is required. */
export function objectFields(schema: Zod): Array<{ name: string; required: boolean; type: string | undefined }> {
  const root = jsonSchemaOf(schema);
  const s = resolve(root, root);
  if (s.type !== 'object' || !s.properties) return [];
  const required = new Set<string>(s.required ?? []);
  return Object.entries(s.properties as Record<string, Json>).map(([name, prop]) => {
    const p = resolve(prop, root);
    const t = Array.isArray(p.type) ? p.type.find((x: string) => x !== 'null') : p.type;
    return { name, required: required.has(name), type: t ?? (p.anyOf || p.oneOf ? 'union' : undefined) };
  });
}
