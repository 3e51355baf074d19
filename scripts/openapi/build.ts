import { isAppRoute, isAppRouteNoBody, isAppRouteOtherResponse, type AppRoute, type AppRouter } from '@ts-rest/core';
import { OpenApiBuilder, type OpenAPIObject, type OperationObject, type ParameterObject, type ResponsesObject, type SchemaObject } from 'openapi3-ts/oas31';
import { z } from 'zod';
import { contract } from '../../contract/index.ts';
import { errorCodes, errorRegistry, type ErrorCode } from '../../contract/common/errors.ts';
import { declaredErrorCodes } from '../../contract/common/responses.ts';
import { merchantScopeOf, type AuthKind, type RouteMeta } from '../../contract/common/meta.ts';
import { webhookEventSchemas } from '../../contract/events.ts';
import { exampleFor } from './examples.ts';
import { curlSample, nodeSample, webhookVerificationMarkdown } from './snippets.ts';

/**
 * Builds openapi/openapi.json from the contract alone: paths, parameters,
 * bodies and responses from the zod schemas (z.toJSONSchema, input side for
 * requests, output side for responses), security from each route's `auth`
 * metadata, and the error codes each response can carry from the registry.
 */

type Json = Record<string, unknown>;

const securitySchemes: Record<Exclude<AuthKind, 'none' | 'checkout' | 'device-refresh'>, { description: string; bearerFormat?: string }> = {
  merchant: { description: 'Brand secret API key: `Authorization: Bearer sk_live_…` or `sk_test_…` (keys issued before as `pk_live_…`/`pk_test_…` keep working). Data is scoped to the brand that owns the key and to the key\'s mode: a test key sees and creates only test objects, a live key only live ones.' },
  device: { description: "Device access JWT from pairing or refresh: `Authorization: Bearer <access token>`. Valid 24 hours.", bearerFormat: 'JWT' },
  admin: { description: 'Admin token from configuration (`ADMIN_TOKEN`, printed on the first embedded run); acts as an owner over every brand. The console uses a session cookie instead (`consoleSession`).' },
  operator: { description: 'Console session cookie `pc_admin_session` (`__Host-pc_admin_session` over TLS) from `POST /api/admin/v1/session`; every method but GET/HEAD also needs `X-CSRF-Token`.' },
  pairing: { description: 'One-time pairing code created by an admin: `Authorization: Bearer <pairing code>`.' },
};

const CONSOLE_SCHEME = 'consoleSession';
const schemeName = (kind: string) => (kind === 'operator' ? CONSOLE_SCHEME : `${kind}Auth`);
/** Admin routes take the admin token or a console session; either is enough. */
const securityOf = (auth: AuthKind) =>
  auth === 'admin' ? [{ [schemeName('admin')]: [] }, { [CONSOLE_SCHEME]: [] }] : auth in securitySchemes ? [{ [schemeName(auth)]: [] }] : [];

class SchemaCollector {
  readonly components: Record<string, SchemaObject> = {};

  /** Converts a zod schema and hoists its named definitions into components. */
  convert(schema: z.ZodType, io: 'input' | 'output'): SchemaObject {
    const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any', reused: 'inline' }) as Json;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, Json>;
    delete json.$defs;
    const rename: Record<string, string> = Object.fromEntries(Object.keys(defs).map((id) => [id, id]));
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (node && typeof node === 'object') {
        const out: Json = {};
        const obj = node as Json;
        for (const [k, v] of Object.entries(obj)) {
          if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
            const id = v.slice('#/$defs/'.length);
            out[k] = `#/components/schemas/${rename[id] ?? id}`;
          } else if ((k === 'minimum' && v === Number.MIN_SAFE_INTEGER) || (k === 'maximum' && v === Number.MAX_SAFE_INTEGER)) {
            // zod's int() bounds to the safe-integer range; published, they only leak into examples as -9007199254740991.
            continue;
          } else if (k === 'pattern' && obj.format === 'date-time') {
            // zod's datetime regex is exact but unreadable; `format` says the same to a reader.
            continue;
          } else {
            out[k] = rewrite(v);
          }
        }
        return out;
      }
      return node;
    };
    // A named schema whose input side differs from its output side (defaults,
    // transforms) is published twice: `Name` and `NameInput`.
    for (const id of Object.keys(defs)) {
      const existing = this.components[id];
      if (existing && JSON.stringify(existing) !== JSON.stringify(rewrite(defs[id]))) {
        if (io === 'output') throw new Error(`two different schemas share the OpenAPI id ${id}`);
        rename[id] = `${id}Input`;
      }
    }
    for (const [id, def] of Object.entries(defs)) this.components[rename[id]!] = rewrite(def) as SchemaObject;
    return rewrite(json) as SchemaObject;
  }
}

/**
 * A query value is text on the wire, but a whole-number one (`page`, `per_page`)
 * is published as the integer it parses to, with its range and default.
 */
function querySchema(collector: SchemaCollector, s: z.ZodType): SchemaObject {
  const input = collector.convert(s, 'input') as Json;
  if (input.type !== 'string' || typeof input.pattern !== 'string' || !/^\^\[0-9\]/.test(input.pattern)) return input as SchemaObject;
  const output = collector.convert(s, 'output') as Json;
  if (output.type !== 'integer') return input as SchemaObject;
  const out: Json = { ...output };
  if (input.default !== undefined) out.default = Number(input.default);
  return out as SchemaObject;
}

function objectProperties(schema: unknown): Record<string, z.ZodType> {
  const shape = (schema as { shape?: Record<string, z.ZodType> } | undefined)?.shape;
  return shape ?? {};
}

function isOptional(s: z.ZodType): boolean {
  return (s as { safeParse(v: unknown): { success: boolean } }).safeParse(undefined).success;
}

function walk(router: AppRouter, prefix: string[], visit: (route: AppRoute, key: string[]) => void) {
  for (const [k, v] of Object.entries(router)) {
    if (isAppRoute(v)) visit(v, [...prefix, k]);
    else walk(v as AppRouter, [...prefix, k], visit);
  }
}

const camel = (parts: string[]) => parts.map((p, i) => (i === 0 ? p : p[0]!.toUpperCase() + p.slice(1))).join('');

function errorDescription(status: number, codes: ErrorCode[]): string {
  const mine = [...new Set(codes)].filter((c) => errorRegistry[c].status === status);
  if (!mine.length) return 'Error';
  return mine.map((c) => `\`${c}\`: ${errorRegistry[c].description}`).join('\n\n');
}

function errorCodeTable(): string {
  const rows = errorCodes.map((c) => `| \`${c}\` | ${errorRegistry[c].status} | ${errorRegistry[c].message} | ${errorRegistry[c].description.replace(/\|/g, '\\|')} |`);
  return ['| Code | HTTP | Default message | When |', '|---|---|---|---|', ...rows].join('\n');
}

const tagDescriptions: Record<string, string> = {
  'OwnPay app':
    "OwnPay's Android app unchanged: pair it with a pairing code (the console's \"OwnPay app\" QR encodes `{\"server_url\",\"otp\"}`), and it uploads AES-256-GCM encrypted SMS that go through the native intake and matcher. The device is a normal device marked `protocol: ownpay`. It does not report its clock, battery or missed SMS (backfill), so those features are lost (README \"The OwnPay Android app\").",
  System: 'Liveness and readiness probes.',
  Brand: 'The brand (merchant account) behind an API key.',
  Payments: 'Payment intents and the transactions that pay them.',
  Refunds: 'Refunds of completed transactions.',
  'Payment links': 'Shareable links (with QR codes) that create a payment per visit and continue on the hosted checkout.',
  Customers: "The brand's customers; personal data is encrypted at rest and looked up by keyed hashes.",
  Webhooks: 'Webhook endpoint configuration, delivery log, and the events the service sends.',
  Checkout: "JSON calls of the hosted checkout page; the unguessable payment id is the only credential. Includes the sandbox gateway's signed callback.",
  'Device session': 'Pairing a phone with a one-time code, token refresh (rotating refresh tokens) and heartbeats.',
  'Device dashboard': "Today's figures for the brand, in the brand's time zone.",
  'Device config': 'SMS filter rules the app applies on the phone before forwarding anything.',
  'Device notifications': 'Push notifications for this device and their acknowledgement.',
  'Outbound SMS': "Messages queued by the merchant, leased to a device to send through its SIM.",
  'SMS forwarding': 'Payment SMS forwarded by the phone; each is stored once and matched to a waiting transaction.',
  'Admin: Audit log': 'Append-only record of every admin change to money, verification, credentials or configuration.',
  'Admin: Brands': 'Merchant accounts and their API keys (a key is shown once and stored only as a hash).',
  'Admin: Devices': 'Paired phones with their presence, revocation, pairing codes, notifications and outbound SMS.',
  'Admin: Exchange rates': 'Rates used to convert an intent into a gateway currency (direct, else inverse).',
  'Admin: Gateways': 'Payment gateways: limits, fees, currencies, receiving account, official SMS senders and templates.',
  'Admin: Refunds': 'Refunds across brands; manual-gateway refunds are completed or failed here.',
  'Admin: SMS filter rules': "Per-brand rules the phone screens SMS with; every change bumps the version.",
  'Admin: SMS records': 'Forwarded SMS with their parse, confidence, candidates and match status.',
  'Admin: Settings': 'Service settings: intent expiry, match threshold and window, device offline threshold.',
  'Admin: Transactions': 'Transactions across brands; manual verification and rejection of ambiguous ones.',
  'Admin: Webhook deliveries': 'Delivery log with every attempt, replay of one or all dead letters.',
};

/** What c.otherResponse() holds (ts-rest does not export its type). */
interface OtherResponse {
  contentType: string;
  body: unknown;
}

/**
 * A second document from the same generator: the OwnPay dialect
 * (contract/ownpay), published as openapi/ownpay.json. Same envelope, errors and
 * schemes; no code samples (OwnPay's own SDKs are the clients) and no
 * `webhooks` section (its deliveries are described in the text).
 */
export interface DocumentVariant {
  root: AppRouter;
  title: string;
  description: string;
  webhooks: boolean;
  codeSamples: boolean;
}

export function buildOpenApiDocument(variant?: DocumentVariant): OpenAPIObject {
  const collector = new SchemaCollector();
  const builder = OpenApiBuilder.create({
    openapi: '3.1.0',
    info: {
      title: variant?.title ?? 'Payment Collection Service API',
      version: '1.0.0',
      description: [
        ...(variant ? [variant.description, ''] : []),
        'Merchant API (`/api/v1`), companion device API (`/api/mobile/v1`), admin API (`/api/admin/v1`) and hosted checkout JSON (`/api/checkout/v1`).',
        '',
        'Every success is `{success: true, data}` (lists add `meta`). Every error is `{success: false, error, errors: [{code, message, field}], request_id}`; the request id is also the `X-Request-Id` header.',
        'Amounts are decimal strings with exactly two places (`"1250.00"`). Timestamps are ISO 8601 UTC ending in `Z`.',
        '',
        '## Error codes',
        '',
        errorCodeTable(),
      ].join('\n'),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Relative: "Try it" calls whatever address the document was loaded from.
    servers: [{ url: '/', description: 'This service (the address this document was loaded from)' }],
    paths: {},
    components: {},
  });

  for (const [kind, s] of Object.entries(securitySchemes)) {
    // The console session is a cookie, not a bearer credential.
    if (kind === 'operator') builder.addSecurityScheme(CONSOLE_SCHEME, { type: 'apiKey', in: 'cookie', name: 'pc_admin_session', description: s.description });
    else builder.addSecurityScheme(schemeName(kind), { type: 'http', scheme: 'bearer', description: s.description, ...(s.bearerFormat ? { bearerFormat: s.bearerFormat } : {}) });
  }

  const tags = new Set<string>();
  const operations: Array<{ op: OperationObject; key: string[]; auth: AuthKind; method: string; path: string }> = [];
  walk(variant?.root ?? contract, [], (route, key) => {
    const m = (route.metadata ?? {}) as RouteMeta;
    const auth = m.auth ?? 'none';
    const params: ParameterObject[] = [];
    const oasPath = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const pathParamNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((x) => x[1]!);
    const pathShape = objectProperties(route.pathParams);
    for (const name of pathParamNames) {
      const s = pathShape[name];
      params.push({ name, in: 'path', required: true, schema: s ? collector.convert(s, 'input') : { type: 'string' }, ...(s?.description ? { description: s.description } : {}) });
    }
    for (const [name, s] of Object.entries(objectProperties(route.query))) {
      params.push({ name, in: 'query', required: !isOptional(s), schema: querySchema(collector, s), ...(s.description ? { description: s.description } : {}) });
    }
    for (const [name, s] of Object.entries(objectProperties(route.headers))) {
      if (name.toLowerCase() === 'authorization') continue;
      params.push({ name, in: 'header', required: !isOptional(s), schema: collector.convert(s, 'input'), ...(s.description ? { description: s.description } : {}) });
    }
    const body = 'body' in route ? route.body : undefined;
    // ts-rest's c.noBody() is a symbol, not a schema: such a route takes no body.
    const hasBody = body !== undefined && body !== null && !isAppRouteNoBody(body as never);
    const responses: ResponsesObject = {};
    for (const [status, schema] of Object.entries(route.responses)) {
      const st = Number(status);
      const isError = st >= 400;
      // Each error response's schema carries the codes the route declares for its status (contract/common/responses.ts).
      const description = isError ? errorDescription(st, [...(declaredErrorCodes(schema) ?? [])]) : st === 201 ? 'Created' : st === 204 ? 'No content' : 'OK';
      responses[status] = isAppRouteNoBody(schema as never)
        ? { description }
        : isAppRouteOtherResponse(schema as never)
          ? // A non-JSON answer (the checkout's text/event-stream) under its own media type.
            { description, content: { [(schema as unknown as OtherResponse).contentType]: { schema: collector.convert((schema as unknown as OtherResponse).body as z.ZodType, 'output') } } }
          : { description, content: { 'application/json': { schema: collector.convert(schema as z.ZodType, 'output') } } };
    }
    // A merchant operation names the API key scope it needs (contract/common/meta.ts merchantScopeOf, the rule the server enforces).
    const scope = auth === 'merchant' ? merchantScopeOf(route) : null;
    const op: OperationObject = {
      operationId: camel(key),
      summary: route.summary,
      description: scope ? `${route.description ?? ''}${route.description ? '\n\n' : ''}API key scope: \`${scope}\` (a key limited to other scopes answers 403 \`INSUFFICIENT_SCOPE\`).` : route.description,
      ...(scope ? { 'x-api-key-scope': scope } : {}),
      tags: [m.tag ?? key[0]!],
      parameters: params.length ? params : undefined,
      responses,
      security: securityOf(auth),
    };
    if (hasBody) {
      const schema = body as z.ZodType;
      op.requestBody = { required: !isOptional(schema), content: { 'application/json': { schema: collector.convert(schema, 'input') } } };
    }
    if (m.idempotent) {
      (op.parameters ??= []).push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description: 'Makes the POST safe to retry: the same key with the same body replays the first response; with another body it is a 409 `IDEMPOTENCY_KEY_REUSED`. Kept 24 hours, per brand.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
    }
    tags.add(op.tags![0]!);
    operations.push({ op, key, auth, method: route.method.toLowerCase(), path: oasPath });
    builder.addPath(oasPath, { ...(builder.getSpec().paths?.[oasPath] ?? {}), [route.method.toLowerCase()]: op });
  });

  // OpenAPI 3.1 `webhooks`: what the service POSTs to a merchant's endpoint.
  const webhooks: Record<string, unknown> = {};
  for (const [event, schema] of variant?.webhooks === false ? [] : Object.entries(webhookEventSchemas)) {
    webhooks[event] = {
      post: {
        operationId: `webhook${camel(event.split('.').map((p) => p[0]!.toUpperCase() + p.slice(1)))}`,
        summary: `${event} event`,
        description:
          'Sent to the brand\'s webhook endpoint. Verify `X-Webhook-Signature: t=<unix seconds>,v1=<hex>` (HMAC-SHA256 of `{t}.{raw body}` with the endpoint secret; one `v1` per active secret) before trusting the body, and deduplicate on `X-Webhook-Id`, which is the same on every retry. Answer 2xx within the timeout; anything else is retried with exponential backoff.',
        tags: ['Webhooks'],
        // Outgoing calls: the merchant's receiver authenticates them by signature.
        security: [],
        parameters: [
          { name: 'X-Webhook-Signature', in: 'header', required: true, schema: { type: 'string' }, description: 'Signature over `{timestamp}.{raw_body}`.' },
          { name: 'X-Webhook-Id', in: 'header', required: true, schema: { type: 'string' }, description: 'Event id, stable across retries and replays.' },
          { name: 'X-Webhook-Event', in: 'header', required: true, schema: { type: 'string', const: event } },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: collector.convert(schema as z.ZodType, 'output') } } },
        responses: { '2XX': { description: 'Delivery accepted. Any other answer, a redirect or a timeout is a failed attempt.' } },
      },
    };
  }
  if (variant?.webhooks !== false) tags.add('Webhooks');

  for (const [name, schema] of Object.entries(collector.components)) builder.addSchema(name, schema);
  const shared = addExamples(builder.getSpec().paths ?? {}, collector.components);
  for (const item of Object.values(webhooks) as Json[]) {
    const post = item.post as Json;
    const media = ((post.requestBody as Json).content as Json)['application/json'] as Json;
    media.example = exampleFor(media.schema as Json, collector.components);
  }
  if (variant?.codeSamples !== false) for (const { op, key, auth, method, path: p } of operations) addCodeSamples(op, key, auth, method, p);
  const groups = tagGroups(operations, tags);
  const spec = builder.getSpec();
  const webhooksTag = tagDescriptions.Webhooks + '\n\n## Verifying a delivery\n\n' + webhookVerificationMarkdown();
  const orderedTags = groups.flatMap((g) => g.tags).map((t) => ({ name: t, description: t === 'Webhooks' ? webhooksTag : (tagDescriptions[t] ?? `${t} operations.`) }));
  return JSON.parse(
    JSON.stringify({
      ...spec,
      tags: orderedTags,
      'x-tagGroups': groups,
      components: { ...spec.components, responses: shared.responses },
      webhooks,
    }),
  ) as OpenAPIObject;
}

/** Who reads a tag, by the surface its operations live on; merchants first. */
const audiences: Array<{ name: string; prefix: string }> = [
  { name: 'Merchant API', prefix: '/api/v1/' },
  { name: 'Hosted checkout', prefix: '/api/checkout/' },
  { name: 'Companion device', prefix: '/api/mobile/' },
  { name: 'Admin', prefix: '/api/admin/' },
];
/** Within the merchant group, the order an integration meets them in. */
const preferredOrder = ['Payments', 'Refunds', 'Customers', 'Webhooks', 'Brand'];

function tagGroups(operations: Array<{ op: OperationObject; path: string }>, tags: Set<string>): Array<{ name: string; tags: string[] }> {
  const audienceOf = new Map<string, number>();
  for (const { op, path: p } of operations) {
    const tag = op.tags![0]!;
    const i = audiences.findIndex((a) => p.startsWith(a.prefix));
    const idx = i === -1 ? audiences.length : i;
    audienceOf.set(tag, Math.min(audienceOf.get(tag) ?? idx, idx));
  }
  audienceOf.set('Webhooks', 0);
  const rank = (t: string) => (preferredOrder.includes(t) ? preferredOrder.indexOf(t) : preferredOrder.length);
  const groups = [...audiences.map((a) => a.name), 'Operations'].map((name, i) => ({
    name,
    tags: [...tags].filter((t) => (audienceOf.get(t) ?? audiences.length) === i).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)),
  }));
  return groups.filter((g) => g.tags.length);
}

function addCodeSamples(op: OperationObject, key: string[], auth: AuthKind, method: string, oasPath: string): void {
  const media = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
  const body = media?.example as unknown;
  const samples = [{ lang: 'Shell', label: 'curl', source: curlSample(method, oasPath, op as Json, auth, body) }];
  if (key[0] === 'merchant') samples.push({ lang: 'JavaScript', label: 'Node SDK', source: nodeSample(key.slice(1), op as Json, method === 'get' ? undefined : body) });
  (op as Json)['x-codeSamples'] = samples;
}

/**
 * A concrete example beside every JSON body. Every error response shows the
 * envelope once per code the operation can answer with that status (so a reader
 * sees each code it must handle), written inline: a reader's tool needs no
 * reference resolution to show it.
 */
function addExamples(paths: Record<string, any>, components: Record<string, any>): { responses: Record<string, unknown> } {
  // Error responses repeat across routes: each distinct one is published once in components.responses.
  const errorResponses: Record<string, unknown> = {};
  const responseNames = new Map<string, string>();
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item as Record<string, any>)) {
      for (const param of op.parameters ?? []) {
        if (param.schema && param.example === undefined) param.example = exampleFor(param.schema, components, 0, param.name, 'request');
      }
      const body = op.requestBody?.content?.['application/json'];
      if (body?.schema) body.example = exampleFor(body.schema, components, 0, '', 'request');
      for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, any]>) {
        const media = response.content?.['application/json'];
        if (!media?.schema) continue;
        if (Number(status) < 400) {
          media.example = exampleFor(media.schema, components);
          continue;
        }
        const codes = [...(response.description as string).matchAll(/^`([A-Z_]+)`/gm)].map((m) => m[1]! as ErrorCode);
        if (!codes.length) throw new Error(`${op.operationId} ${status}: an error response without a declared code`);
        media.examples = Object.fromEntries(codes.map((code) => [code, { summary: code, value: errorExample(code) }]));
        const text = JSON.stringify(response);
        let refName = responseNames.get(text);
        if (!refName) {
          // A plain error envelope is named by its codes; a response whose body is
          // more than the envelope (readiness's 503) also by its operation.
          const plain = media.schema?.properties?.success?.const === false;
          refName = (plain ? '' : pascal(op.operationId)) + codes.map(pascal).join('Or');
          if (errorResponses[refName]) throw new Error(`two different error responses would both be named ${refName}`);
          errorResponses[refName] = response;
          responseNames.set(text, refName);
        }
        op.responses[status] = { $ref: `#/components/responses/${refName}` };
      }
    }
  }
  return { responses: errorResponses };
}

/**
 * The error envelope as the service sends it for one code (its default
 * message). The response is shared by operations with different fields, so no
 * `field` is named (as for a path that is not valid percent-encoding).
 */
function errorExample(code: ErrorCode): unknown {
  const message = errorRegistry[code].message;
  return { success: false, error: message, errors: [{ code, message, field: null }], request_id: 'req_0f1e2d3c4b5a69788796a5b4c3d2e1f0' };
}

/** `PAYMENT_NOT_FOUND` → `PaymentNotFound`; `systemReady` → `SystemReady`. */
const pascal = (name: string) => (/^[A-Z_]+$/.test(name) ? name.toLowerCase().split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('') : name[0]!.toUpperCase() + name.slice(1));

export function renderOpenApi(variant?: DocumentVariant): string {
  return `${JSON.stringify(buildOpenApiDocument(variant), null, 2)}\n`;
}
