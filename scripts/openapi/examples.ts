/**
 * Builds an example value from a JSON Schema, so every request and response in
 * the OpenAPI document shows a concrete body. Field-level `examples` (written in
 * the contract with `.meta({ examples })`) win; otherwise `default`, `const`,
 * the first `enum` value, a value fitting the `format`, then the type.
 */
type Schema = Record<string, any>;

const FUTURE = /expire|deadline|until|_by$/;
const FUTURE_TIMESTAMP = '2030-01-15T10:45:00.000Z';

export type ExampleSide = 'request' | 'response';

export function exampleFor(schema: Schema | undefined, components: Record<string, Schema>, depth = 0, name = '', side: ExampleSide = 'response'): unknown {
  if (!schema || depth > 8) return null;
  const next = (s: Schema | undefined, n = name) => exampleFor(s, components, depth + 1, n, side);
  if (typeof schema.$ref === 'string') {
    return next(components[schema.$ref.split('/').pop()!]);
  }
  // A shared timestamp schema carries one example date; a deadline must still lie ahead of the reader.
  if (schema.format === 'date-time' && FUTURE.test(name)) return FUTURE_TIMESTAMP;
  // The shared money schema's example is an amount; a fee beside it should not equal it.
  if (/fee/.test(name) && schema.type === 'string' && !Array.isArray(schema.enum) && (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test('18.50'))) return '18.50';
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const nonNull = schema[key].find((s: Schema) => s.type !== 'null') ?? schema[key][0];
      return next(nonNull);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...schema.allOf.map((s: Schema) => next(s, '') as object));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      for (const [k, v] of Object.entries(props)) {
        // A request shows one way of saying a thing: a relative expiry, not also an absolute one
        // (which would be in the past by the time the example is read).
        if (side === 'request' && k === 'expires_at' && 'expires_in' in props) continue;
        out[k] = next(v, k);
      }
      return out;
    }
    case 'array':
      return [next(schema.items)];
    case 'integer':
    case 'number':
      return numberExample(schema, name);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return stringExample(schema, name);
    default:
      return null;
  }
}

/** Plausible values by field name, used when they fit the field's pattern. */
const byName: Array<[RegExp, string[]]> = [
  [/email/, ['customer@example.com']],
  [/phone|sender_number|msisdn/, ['+8801712345678']],
  [/idempotency/i, ['order-1001']],
  [/cancel_url/, ['https://merchant.example.com/cart']],
  // The service's own hosted page for the example payment id (server/domain/payments/intents.ts).
  [/checkout_url/, ['https://pay.example.com/checkout/3f2b8c1e-6a4d-4e7b-9c2a-1d5e8f7a6b30']],
  [/url$/, ['https://merchant.example.com/orders/1001']],
  [/reference/, ['ORDER-1001']],
  [/^name$|_name$/, ['Rahim Uddin']],
  [/trx_id/, ['TRX9F8E7D6C5B4A3921']],
  [/currency|^base$|^quote$/, ['BDT']],
  [/percent/, ['1.85']],
  [/rate/, ['0.0091000000', '110.5000000000']],
  [/fee/, ['18.50']],
  [/amount|revenue|total/, ['1250.00']],
  // The demo gateway's code and its one method (server/domain/brands/demo.ts): values the service accepts.
  [/^methods?$/, ['send_money']],
  [/gateway/, ['bkash']],
  [/^mode$/, ['test']],
  [/flags/, ['i']],
  [/^types$/, ['payment.completed,refund.completed']],
  [/date|^from$|^to$/, ['2026-11-21']],
  [/code$/, ['bkash']],
];

const generic = ['example', '1250.00', '10.00', 'BDT', '2026-11-21', 'i', '1'];

/** Whole numbers by field name, clamped into the schema's range. */
function numberExample(s: Schema, name: string): number {
  const wanted = /^page$/.test(name) ? 1 : /per_page|limit/.test(name) ? 20 : /expires_in/.test(name) ? 1800 : /minutes/.test(name) ? 60 : /(^|_)id$|_id$/.test(name) ? 42 : /count|total|attempt/.test(name) ? 3 : 1;
  const lo = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : -Infinity;
  const hi = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : Infinity;
  return Math.min(Math.max(wanted, lo), hi);
}

function stringExample(s: Schema, name: string): string {
  switch (s.format) {
    case 'date-time':
      // Deadlines lie ahead of the reader; records were made in the past.
      return FUTURE.test(name) ? FUTURE_TIMESTAMP : '2026-11-21T10:15:30.000Z';
    case 'date':
      return '2026-11-21';
    case 'uuid':
      return '3f2b8c1e-6a4d-4e7b-9c2a-1d5e8f7a6b30';
    case 'email':
      return 'customer@example.com';
    case 'uri':
    case 'url':
      return /cancel/.test(name) ? 'https://merchant.example.com/cart' : 'https://merchant.example.com/orders/1001';
  }
  const hinted = byName.filter(([re]) => re.test(name)).flatMap(([, values]) => values);
  const fits = (v: string) =>
    (s.pattern === undefined || new RegExp(s.pattern, 'u').test(v)) &&
    (s.minLength === undefined || v.length >= s.minLength) &&
    (s.maxLength === undefined || v.length <= s.maxLength);
  const found = [...hinted, ...generic].find(fits);
  if (found !== undefined) return found;
  return typeof s.minLength === 'number' && s.minLength > 6 ? 'x'.repeat(s.minLength) : 'string';
}
