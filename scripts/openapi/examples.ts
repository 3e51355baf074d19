/**
 * Builds an example value from a JSON Schema, so every request and response in
 * the OpenAPI document shows a concrete body. Field-level `examples` (written in
 * the contract with `.meta({ examples })`) win; otherwise `default`, `const`,
 * the first `enum` value, a value fitting the `format`, then the type.
 */
type Schema = Record<string, any>;

export function exampleFor(schema: Schema | undefined, components: Record<string, Schema>, depth = 0, name = ''): unknown {
  if (!schema || depth > 8) return null;
  if (typeof schema.$ref === 'string') {
    return exampleFor(components[schema.$ref.split('/').pop()!], components, depth + 1, name);
  }
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const nonNull = schema[key].find((s: Schema) => s.type !== 'null') ?? schema[key][0];
      return exampleFor(nonNull, components, depth + 1, name);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...schema.allOf.map((s: Schema) => exampleFor(s, components, depth + 1) as object));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) out[k] = exampleFor(v, components, depth + 1, k);
      return out;
    }
    case 'array':
      return [exampleFor(schema.items, components, depth + 1, name)];
    case 'integer':
      return schema.minimum ?? 1;
    case 'number':
      return schema.minimum ?? 1;
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
  [/url$/, ['https://merchant.example.com/orders/1001']],
  [/reference/, ['ORDER-1001']],
  [/^name$|_name$/, ['Rahim Uddin']],
  [/trx_id/, ['TRX9F8E7D6C5B4A3921']],
  [/currency|^base$|^quote$/, ['BDT']],
  [/percent/, ['1.85']],
  [/rate/, ['0.0091000000', '110.5000000000']],
  [/amount|fee|revenue/, ['1250.00']],
  [/flags/, ['i']],
  [/date|^from$|^to$/, ['2026-11-21']],
  [/code$/, ['bkash']],
];

const generic = ['1250.00', '10.00', 'BDT', '2026-11-21', 'i', 'example', '1'];

function stringExample(s: Schema, name: string): string {
  switch (s.format) {
    case 'date-time':
      return '2026-11-21T10:15:30.000Z';
    case 'date':
      return '2026-11-21';
    case 'uuid':
      return '3f2b8c1e-6a4d-4e7b-9c2a-1d5e8f7a6b30';
    case 'email':
      return 'customer@example.com';
    case 'uri':
    case 'url':
      return 'https://merchant.example.com/orders/1001';
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
