import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';

/**
 * Every example in the published document must be valid against the schema
 * beside it: a reader pastes them, and "Try it" sends them as they are.
 */
type Json = Record<string, any>;
const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../openapi/openapi.json');
const doc = JSON.parse(readFileSync(file, 'utf8')) as Json;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'https://paycollect.test/openapi.json', components: doc.components }, 'doc');
const withRefs = (schema: Json) =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"https://paycollect.test/openapi.json#/components/')) as Json;

const deref = (node: Json, section: string): Json =>
  typeof node?.$ref === 'string' ? deref(doc.components[section][String(node.$ref.split('/').pop())], section) : node;

interface Case { where: string; schema: Json; value: unknown }
const cases: Case[] = [];
function mediaCases(where: string, media: Json | undefined) {
  if (!media?.schema) return;
  if (media.example !== undefined) cases.push({ where, schema: media.schema, value: media.example });
  for (const [name, ex] of Object.entries((media.examples ?? {}) as Record<string, Json>)) {
    cases.push({ where: `${where} examples.${name}`, schema: media.schema, value: deref(ex, 'examples').value });
  }
}
const operations: Array<[string, Json]> = [];
for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) for (const [m, op] of Object.entries(item)) operations.push([`${m.toUpperCase()} ${p}`, op]);
for (const [name, item] of Object.entries((doc.webhooks ?? {}) as Record<string, Json>)) operations.push([`webhook ${name}`, item.post]);
for (const [where, op] of operations) {
  for (const param of op.parameters ?? []) {
    if (param.example !== undefined) cases.push({ where: `${where} ${param.in} ${param.name}`, schema: param.schema, value: param.example });
  }
  mediaCases(`${where} request`, op.requestBody?.content?.['application/json']);
  for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
    mediaCases(`${where} ${status}`, deref(response, 'responses').content?.['application/json']);
  }
}

describe('OpenAPI examples', () => {
  it('covers every operation with at least one example', () => {
    const paths = operations.filter(([w]) => !w.startsWith('webhook'));
    expect(paths.length).toBeGreaterThan(50);
    for (const [where] of operations.filter(([w]) => w.startsWith('webhook'))) expect(cases.some((c) => c.where === `${where} request`), where).toBe(true);
    for (const [where] of paths) expect(cases.some((c) => c.where.startsWith(`${where} `)), where).toBe(true);
    expect(cases.length).toBeGreaterThan(300);
  });

  it.each(cases.map((c) => [c.where, c] as const))('%s validates against its schema', (_where, c) => {
    const validate = ajv.compile(withRefs(c.schema));
    const ok = validate(c.value);
    expect(ok ? [] : validate.errors).toEqual([]);
  });

  it('the validator rejects what the schema forbids (the check above can fail)', () => {
    const schema = doc.paths['/api/v1/payments'].post.requestBody.content['application/json'].schema;
    const validate = ajv.compile(withRefs(schema));
    const good = doc.paths['/api/v1/payments'].post.requestBody.content['application/json'].example;
    expect(validate(good)).toBe(true);
    expect(validate({ ...good, amount: 1250 })).toBe(false);
    expect(validate({ ...good, amount: '12.5' })).toBe(false);
  });

  it('has none of the values that misled readers', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain(String(Number.MIN_SAFE_INTEGER));
    expect(text).not.toMatch(/"gateway":"\d/);
    const create = doc.paths['/api/v1/payments'].post.requestBody.content['application/json'].example;
    expect(create).toHaveProperty('expires_in');
    expect(create).not.toHaveProperty('expires_at');
  });

  it('publishes page and per_page as integers, and a server relative to wherever it is served', () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const pageParams = operations.flatMap(([, op]) => (op.parameters ?? []) as Json[]).filter((p) => p.name === 'page' || p.name === 'per_page');
    expect(pageParams.length).toBeGreaterThan(4);
    for (const p of pageParams) expect([p.name, p.schema.type, typeof p.example]).toEqual([p.name, 'integer', 'number']);
  });

  it('orders tags by audience, merchant first, each tag in one group, with code samples', () => {
    const groups = doc['x-tagGroups'] as Array<{ name: string; tags: string[] }>;
    expect(groups[0]).toMatchObject({ name: 'Merchant API' });
    expect(groups[0]!.tags[0]).toBe('Payments');
    expect(groups.map((g) => g.name).indexOf('Admin')).toBeGreaterThan(groups.map((g) => g.name).indexOf('Hosted checkout'));
    expect(groups.flatMap((g) => g.tags).sort()).toEqual((doc.tags as Json[]).map((t) => t.name).sort());
    expect((doc.tags as Json[])[0]!.name).toBe('Payments');
    for (const [where, op] of operations.filter(([w]) => !w.startsWith('webhook'))) {
      const langs = (op['x-codeSamples'] ?? []).map((s: Json) => s.label);
      expect(langs, where).toContain('curl');
      if (where.includes(' /api/v1/')) expect(langs, where).toContain('Node SDK');
    }
  });
});
