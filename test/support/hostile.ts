import { errorEnvelopeSchema } from '../../contract/common/envelope.ts';
import { accepts, fillPath, objectFields, sampleValid, type ContractRoute } from './contract-walk.ts';

/**
 * Hostile inputs generated from a route's own schemas, and a sender that
 * checks every answer. Each input says whether the route's schema accepts it:
 * a refused one must get a 4xx envelope and change nothing; an accepted one
 * (an emoji in a free-text field) may succeed, but never with a 5xx.
 */

export interface HostileInput {
  label: string;
  method: string;
  /** Path and query, already encoded as sent. */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** False: the schema accepts it, so success is a valid answer. */
  mustFail: boolean;
  /** The route the input is aimed at: a refusal must carry a code it declares for the status. */
  route?: ContractRoute;
}

/** Strings that have broken parsers, queries and databases. */
export const HOSTILE_STRINGS: ReadonlyArray<[string, string]> = [
  ['path traversal', '../../etc/passwd'],
  ['encoded traversal', '..%2F..%2Fetc%2Fpasswd'],
  ['sql quote', "' OR 1=1--"],
  ['sql stacked', "1; DROP TABLE brands;--"],
  ['sql union', "1' UNION SELECT key_hash FROM api_keys--"],
  ['NUL', 'a\u0000b'],
  ['only NUL', '\u0000'],
  ['lone high surrogate', 'x\ud800y'],
  ['lone low surrogate', '\udfff'],
  ['RTL override', 'abc\u202Egnp.exe'],
  ['zero width', '\u200b\u200c\u200d\ufeff'],
  ['emoji', '💸🏦👨‍👩‍👧'],
  ['combining', 'e\u0301\u0301\u0301'],
  ['fullwidth digits', '１２３'],
  ['format string', '%s%s%n%x'],
  ['template', '${7*7}{{7*7}}'],
  ['html', '<script>alert(1)</script>'],
  ['CRLF', 'a\r\nX-Injected: 1'],
  ['whitespace only', '   '],
  ['empty', ''],
];

/** Numbers and number-like strings at the edges. */
export const BOUNDARY_NUMBERS: ReadonlyArray<[string, unknown]> = [
  ['-1', -1],
  ['0', 0],
  ['2^31', 2 ** 31],
  ['2^53+1', 2 ** 53 + 1],
  ['1.5', 1.5],
  ['-0.0001', -0.0001],
  ['1e308', 1e308],
];
export const NUMBER_STRINGS: ReadonlyArray<string> = ['-1', '0', '2147483648', '9007199254740993', '1e309', 'NaN', 'Infinity', '-0', '0x10', '1.5', ' 1', '1e3', '٣'];

/** JSON literals JSON.stringify cannot produce (sent as raw text). */
export const RAW_NUMBER_LITERALS: ReadonlyArray<string> = ['1e309', '-1e309', '9007199254740993', '-0', '1E400', '123456789012345678901234567890'];

const WRONG_TYPES: ReadonlyArray<[string, unknown]> = [
  ['null', null],
  ['true', true],
  ['number', 12],
  ['string', 'not the type'],
  ['array', []],
  ['object', {}],
  ['array of objects', [{}]],
];

export const HUGE_STRING_LENGTH = 60_000;

function deepNesting(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

const json = { 'content-type': 'application/json' };

function withQuery(url: string, query: Record<string, string> | string | undefined): string {
  if (query === undefined) return url;
  const qs = typeof query === 'string' ? query : new URLSearchParams(query).toString();
  return qs ? `${url}?${qs}` : url;
}

/** Sets the value at a dotted path in a deep copy (array indexes as numbers). */
function setAt(value: unknown, path: string[], replacement: unknown, remove = false): unknown {
  const copy = structuredClone(value) as any;
  let cur = copy;
  for (const k of path.slice(0, -1)) cur = cur[k];
  const last = path[path.length - 1]!;
  if (remove) delete cur[last];
  else cur[last] = replacement;
  return copy;
}

/** Every path to a leaf or object in a sample, up to `depth` levels. */
function fieldPaths(value: unknown, depth = 3, prefix: string[] = []): string[][] {
  if (depth === 0 || value === null || typeof value !== 'object') return [];
  const out: string[][] = [];
  const entries = Array.isArray(value) ? (value.length ? [['0', value[0]] as const] : []) : Object.entries(value);
  for (const [k, v] of entries) {
    const p = [...prefix, String(k)];
    out.push(p, ...fieldPaths(v, depth - 1, p));
  }
  return out;
}

export interface RouteBaseline {
  params: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers: Record<string, string>;
}

/** Valid parts for a route: fixtures by parameter name, else generated from the schema. */
export function baselineFor(route: ContractRoute, fixtures: Record<string, string>): RouteBaseline {
  const generated = route.pathParams ? ((sampleValid(route.pathParams) ?? {}) as Record<string, string>) : {};
  const params = Object.fromEntries(route.pathParamNames.map((n) => [n, fixtures[n] ?? generated[n] ?? '1']));
  const query = route.query ? ((sampleValid(route.query) as Record<string, string> | undefined) ?? {}) : undefined;
  const body = route.body ? sampleValid(route.body) : undefined;
  const headers = route.headers ? ((sampleValid(route.headers) as Record<string, string> | undefined) ?? {}) : {};
  return { params, query, body, headers };
}

/**
 * encodeURIComponent, except that an unpaired surrogate (which it refuses) is
 * sent as the three bytes a naive UTF-8 encoder would produce: not UTF-8.
 */
export function encodePathValue(v: string): string {
  if (v.isWellFormed()) return encodeURIComponent(v);
  return [...v]
    .map((ch) => {
      if (ch.isWellFormed()) return encodeURIComponent(ch);
      const cu = ch.charCodeAt(0);
      return [0xe0 | (cu >> 12), 0x80 | ((cu >> 6) & 0x3f), 0x80 | (cu & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    })
    .join('');
}

/** Path parameters: traversal, SQL, NUL, boundary numbers, unicode, bad percent-encoding. */
export function pathParamInputs(route: ContractRoute, base: RouteBaseline, auth: Record<string, string>): HostileInput[] {
  const out: HostileInput[] = [];
  const body = base.body === undefined ? undefined : JSON.stringify(base.body);
  const headers = { ...auth, ...base.headers, ...(body === undefined ? {} : json) };
  for (const name of route.pathParamNames) {
    const values: Array<[string, string, boolean]> = [
      ...HOSTILE_STRINGS.filter(([, v]) => v !== '').map(([l, v]) => [l, v, false] as [string, string, boolean]),
      ...NUMBER_STRINGS.map((v) => [`number ${JSON.stringify(v)}`, v, false] as [string, string, boolean]),
      ['huge', 'x'.repeat(5000), false],
      // Sent as typed, not encoded: what a hand-made URL carries.
      ['raw %00', '%00', true],
      ['raw %ff (not UTF-8)', '%ff', true],
      ['raw overlong slash', '%c0%af', true],
      ['raw lone %', '%', true],
      ['raw %2e%2e', '%2e%2e', true],
      ['raw dot dot', '..', true],
    ];
    const encoded = Object.fromEntries(Object.entries(base.params).map(([k, p]) => [k, encodePathValue(p)]));
    for (const [label, v, raw] of values) {
      const url = withQuery(fillPath(route.path, { ...encoded, [name]: raw ? v : encodePathValue(v) }, true), base.query);
      out.push({ label: `path ${name}: ${label}`, method: route.method, url, headers, body, mustFail: true });
    }
  }
  return out;
}

/** Query parameters: wrong types, boundary numbers, repeats, brackets, unknown names. */
export function queryInputs(route: ContractRoute, base: RouteBaseline, auth: Record<string, string>): HostileInput[] {
  if (!route.query || !base.query) return [];
  const path = fillPath(route.path, base.params);
  const headers = { ...auth, ...base.headers };
  const out: HostileInput[] = [];
  const push = (label: string, query: Record<string, string> | string, parsed: unknown) =>
    out.push({ label: `query ${label}`, method: route.method, url: withQuery(path, query), headers, mustFail: !accepts(route.query, parsed) });
  const names = new Set([...Object.keys(base.query), ...objectFields(route.query).map((f) => f.name)]);
  for (const name of names) {
    for (const v of [...NUMBER_STRINGS, ...HOSTILE_STRINGS.map(([, s]) => s), 'x'.repeat(5000)]) {
      const q = { ...base.query, [name]: v };
      push(`${name}=${JSON.stringify(v.slice(0, 20))}`, q, q);
    }
    const rest = new URLSearchParams(base.query);
    rest.delete(name);
    push(`${name} repeated`, `${rest.toString()}&${name}=1&${name}=2`, { ...Object.fromEntries(rest), [name]: ['1', '2'] });
    push(`${name}[a]=1`, `${rest.toString()}&${name}[a]=1`, { ...Object.fromEntries(rest), [`${name}[a]`]: '1' });
  }
  push('unknown parameter', { ...base.query, zz_unknown: '1' }, { ...base.query, zz_unknown: '1' });
  push('invalid percent-encoding', `${new URLSearchParams(base.query).toString()}&page=%ff%fe`, { ...base.query, page: '\ufffd\ufffd' });
  return out;
}

/** Bodies: whole-body garbage, then every field (nested too) replaced, removed or padded. */
export function bodyInputs(route: ContractRoute, base: RouteBaseline, auth: Record<string, string>): HostileInput[] {
  if (!route.body || route.method === 'GET') return [];
  const url = withQuery(fillPath(route.path, base.params), base.query);
  const headers = { ...auth, ...base.headers, ...json };
  const sample = base.body ?? {};
  const out: HostileInput[] = [];
  const raw = (label: string, body: string | Buffer, extra: Record<string, string> = {}, mustFail = true) =>
    out.push({ label: `body ${label}`, method: route.method, url, headers: { ...headers, ...extra }, body, mustFail });
  const value = (label: string, v: unknown) => raw(label, JSON.stringify(v), {}, !accepts(route.body, v));

  // Whole body.
  for (const text of ['', 'null', '[]', '1', '"text"', 'true', '{', '{"a":1', '{"a":1}}', '\ufeff{}', "{'a':1}", '{"a":1,}', '[1,2', 'NaN'])
    raw(`text ${JSON.stringify(text)}`, text, {}, !accepts(route.body, safeParse(text)));
  raw('deeply nested arrays', deepNesting(30_000));
  raw('deeply nested objects', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000));
  raw('invalid UTF-8 bytes', Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('"}')]));
  raw('invalid UTF-8 in a valid field', invalidUtf8In(sample));
  raw('UTF-16 body', Buffer.from(JSON.stringify(sample), 'utf16le'), { 'content-type': 'application/json; charset=utf-16' });
  raw('text/plain', JSON.stringify(sample), { 'content-type': 'text/plain' });
  raw('form encoded', 'a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' });
  raw('gzip claimed, not gzip', JSON.stringify(sample), { 'content-encoding': 'gzip' });
  value('prototype pollution __proto__', JSON.parse(`{"__proto__":{"polluted":"yes"},${JSON.stringify(sample).slice(1)}`.replace(',}', '}')));
  value('prototype pollution constructor', { ...(sample as object), constructor: { prototype: { polluted: 'yes' } } });
  value('unknown field', { ...(sample as object), zz_unknown: 1 });
  if (sample && typeof sample === 'object' && !Array.isArray(sample) && Object.keys(sample).length) {
    const [k, v] = Object.entries(sample)[0]!;
    raw(`duplicate key ${k}`, `{${JSON.stringify(k)}:${JSON.stringify(v)},${JSON.stringify(sample).slice(1)}`, {}, !accepts(route.body, sample));
  }

  // Each field.
  for (const path of fieldPaths(sample)) {
    const name = path.join('.');
    value(`${name} missing`, setAt(sample, path, undefined, true));
    for (const [label, v] of WRONG_TYPES) value(`${name} ${label}`, setAt(sample, path, v));
    for (const [label, v] of BOUNDARY_NUMBERS) value(`${name} ${label}`, setAt(sample, path, v));
    for (const v of NUMBER_STRINGS) value(`${name} ${JSON.stringify(v)}`, setAt(sample, path, v));
    for (const [label, v] of HOSTILE_STRINGS) value(`${name} ${label}`, setAt(sample, path, v));
    value(`${name} huge string`, setAt(sample, path, 'x'.repeat(HUGE_STRING_LENGTH)));
    value(`${name} long array`, setAt(sample, path, Array.from({ length: 5000 }, () => 1)));
    for (const literal of RAW_NUMBER_LITERALS) {
      const text = JSON.stringify(setAt(sample, path, '__RAW__')).replace('"__RAW__"', literal);
      raw(`${name} raw ${literal}`, text, {}, !accepts(route.body, safeParse(text)));
    }
    const nested = JSON.stringify(setAt(sample, path, '__RAW__')).replace('"__RAW__"', deepNesting(5000));
    raw(`${name} deeply nested`, nested);
  }
  return out;
}

/** What the server's JSON parser makes of a body: empty is no body, a leading BOM is dropped. */
function safeParse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text.replace(/^\ufeff/, ''));
  } catch {
    return Symbol('unparseable');
  }
}

function invalidUtf8In(sample: unknown): Buffer {
  const text = JSON.stringify(sample);
  const at = text.indexOf('":"');
  if (at < 0) return Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
  return Buffer.concat([Buffer.from(text.slice(0, at + 3)), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(text.slice(at + 3))]);
}

export interface Answer {
  status: number;
  contentType: string | null;
  requestIdHeader: string | null;
  text: string;
  ms: number;
}

/** Sends one input with a hard deadline: no answer in time is a hang. */
export async function send(baseUrl: string, input: HostileInput, timeoutMs = 10_000): Promise<Answer | { hang: true; ms: number; error: string }> {
  const started = performance.now();
  try {
    const res = await fetch(baseUrl + input.url, {
      method: input.method,
      headers: input.headers,
      body: input.body === undefined ? undefined : typeof input.body === 'string' ? input.body : new Uint8Array(input.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, contentType: res.headers.get('content-type'), requestIdHeader: res.headers.get('x-request-id'), text, ms: performance.now() - started };
  } catch (err) {
    return { hang: true, ms: performance.now() - started, error: (err as Error).message };
  }
}

export const REFUSAL_STATUSES = new Set([400, 401, 404, 409, 410, 413, 415, 422]);

/**
 * A refusal status, or the lock-out doing its job: the suite's many wrong
 * `current_password`s and TOTP codes on the console's own-account routes count
 * toward the operator's lock-out, as an attacker's guesses must, so those routes
 * answer 429 `ACCOUNT_LOCKED` once it trips (its envelope is still checked below).
 */
function refused(answer: { status: number; text: string }): boolean {
  return REFUSAL_STATUSES.has(answer.status) || (answer.status === 429 && answer.text.includes('"code":"ACCOUNT_LOCKED"'));
}

/** Why an answer is wrong for its input, or null when it is right. */
export function judge(input: HostileInput, answer: Awaited<ReturnType<typeof send>>): string | null {
  if ('hang' in answer) return `no answer within the deadline (${answer.error})`;
  if (answer.status >= 500) return `${answer.status}: ${answer.text.slice(0, 200)}`;
  if (!input.mustFail && answer.status < 300) return null;
  if (input.mustFail && !refused(answer)) return `status ${answer.status} for an input the schema refuses: ${answer.text.slice(0, 200)}`;
  if (!input.mustFail && !refused(answer)) return `status ${answer.status}: ${answer.text.slice(0, 200)}`;
  if (!answer.contentType?.startsWith('application/json')) return `content-type ${answer.contentType}`;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return `not JSON: ${answer.text.slice(0, 100)}`;
  }
  const envelope = errorEnvelopeSchema.safeParse(body);
  if (!envelope.success) return `not the error envelope: ${answer.text.slice(0, 200)}`;
  if (envelope.data.request_id !== answer.requestIdHeader) return 'request_id differs from X-Request-Id';
  return input.route ? undeclaredAnswer(input, input.route, answer.status, body) : null;
}

/**
 * Why a refusal is not one the route declares, or null. The route's schema for
 * the status admits exactly the codes it declares there; a path mangled into no
 * route at all (`..`, an encoded slash) is the router's `NOT_FOUND`, not the route's.
 */
export function undeclaredAnswer(input: HostileInput, route: ContractRoute, status: number, body: unknown): string | null {
  const codes = (body as { errors: Array<{ code: string }> }).errors.map((e) => e.code);
  if (input.label.startsWith('path ') && status === 404 && codes.every((c) => c === 'NOT_FOUND')) return null;
  const schema = route.responses[status];
  if (schema?.safeParse(body).success) return null;
  return `${status} ${codes.join(',')} is not declared for ${route.name} (add the code to its meta({ errors }))`;
}

/** Sends inputs a few at a time; returns the failures as readable lines. */
export async function runInputs(baseUrl: string, inputs: HostileInput[], concurrency = 6): Promise<{ failures: string[]; slowestMs: number }> {
  const failures: string[] = [];
  let slowestMs = 0;
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const input = inputs[next++]!;
      const answer = await send(baseUrl, input);
      slowestMs = Math.max(slowestMs, answer.ms);
      const why = judge(input, answer);
      if (why) failures.push(`${input.method} ${input.url.slice(0, 120)} [${input.label}]: ${why}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { failures, slowestMs };
}
