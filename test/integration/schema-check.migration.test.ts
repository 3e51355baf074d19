import { defineEntity, p, type EntitySchema } from '@mikro-orm/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entities } from '../../server/domain/entities.ts';
import { createOrm, type Orm } from '../../server/infra/database/orm.ts';
import { checkSchema, describeSchemaCheck, schemaDrift, TABLES_NOT_YET_MATCHING } from '../../server/infra/database/schema-diff.ts';
import { createTestDatabase } from '../support/harness.ts';

/**
 * The entities are the schema: the database the migrations build must be the
 * one the entities describe (what `npm run schema:check` asserts). The other
 * cases prove the check can fail: a column, a nullability, an index or a table
 * on one side only is reported with the SQL that would close the gap.
 */

let database: { url: string; drop(): Promise<void> };
let client: pg.Client;
const opened: Orm[] = [];

async function ormWith(extra: EntitySchema[] = []): Promise<Orm> {
  const orm = await createOrm({ url: database.url, entities: [...entities, ...extra], poolMax: 2 });
  opened.push(orm);
  return orm;
}

/** A table of this test's own, so the cases do not depend on how far the allow-list has shrunk. */
const probeProperties = {
  id: p.bigint('number').primary().autoincrement(),
  label: p.string().length(40),
  note: p.text().nullable(),
  createdAt: p.datetime().defaultRaw('now()'),
};
const Probe = defineEntity({ name: 'SchemaProbe', tableName: 'schema_probe', properties: probeProperties, indexes: [{ name: 'schema_probe_label_idx', properties: ['label'] }] });

beforeAll(async () => {
  // A clone of the template the migrations built, as every test file gets.
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query(`CREATE TABLE schema_probe (
    id bigserial PRIMARY KEY,
    label varchar(40) NOT NULL,
    note text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`);
  await client.query('CREATE INDEX schema_probe_label_idx ON schema_probe (label)');
});

afterAll(async () => {
  for (const orm of opened) await orm.close();
  await client.end();
  await database.drop();
});

describe('schema check', () => {
  it('the migrated database matches the entities', async () => {
    const orm = await ormWith([Probe as unknown as EntitySchema]);
    const check = await checkSchema(orm);
    expect(check.ok, describeSchemaCheck(check)).toBe(true);
    expect(check.sql).toBe('');
  });

  it('fails on an entity column the database lacks, printing the SQL to add it', async () => {
    const Drifted = defineEntity({
      name: 'SchemaProbe',
      tableName: 'schema_probe',
      properties: { ...probeProperties, extra: p.integer().nullable() },
      indexes: [{ name: 'schema_probe_label_idx', properties: ['label'] }],
    });
    const check = await checkSchema(await ormWith([Drifted as unknown as EntitySchema]));
    expect(check.ok).toBe(false);
    expect(check.drifted).toEqual(['schema_probe']);
    expect(check.sql).toContain('alter table "schema_probe" add "extra" int null');
    expect(describeSchemaCheck(check)).toContain('alter table "schema_probe" add "extra" int null');
  });

  it('fails on a nullability or an index that differs', async () => {
    const Drifted = defineEntity({
      name: 'SchemaProbe',
      tableName: 'schema_probe',
      properties: { ...probeProperties, note: p.text() },
    });
    const check = await checkSchema(await ormWith([Drifted as unknown as EntitySchema]));
    expect(check.ok).toBe(false);
    expect(check.sql).toContain('alter column "note" set not null');
    expect(check.sql).toContain('drop index "schema_probe_label_idx"');
  });

  it('fails on a table no entity describes', async () => {
    const check = await checkSchema(await ormWith());
    expect(check.ok).toBe(false);
    expect(check.drifted).toEqual(['schema_probe']);
    expect(check.sql).toContain('drop table if exists "schema_probe"');
  });

  it('an allow-listed table is set aside, and the list fails once it matches (it can only shrink)', async () => {
    const orm = await ormWith([Probe as unknown as EntitySchema]);
    const stale = await checkSchema(orm, [...TABLES_NOT_YET_MATCHING, 'schema_probe']);
    expect(stale.ok).toBe(false);
    expect(stale.stale).toEqual(['schema_probe']);
    expect(describeSchemaCheck(stale)).toContain('remove them from TABLES_NOT_YET_MATCHING');

    const Drifted = defineEntity({ name: 'SchemaProbe', tableName: 'schema_probe', properties: { ...probeProperties, extra: p.integer().nullable() } });
    const pending = await checkSchema(await ormWith([Drifted as unknown as EntitySchema]), [...TABLES_NOT_YET_MATCHING, 'schema_probe']);
    expect(pending.ok).toBe(true);
    expect(pending.pending).toContain('schema_probe');
    expect(pending.sql).toBe('');
  });

  it('without an allow-list the SQL is what MikroORM itself would run', async () => {
    const Drifted = defineEntity({ name: 'SchemaProbe', tableName: 'schema_probe', properties: { ...probeProperties, extra: p.integer().nullable() } });
    const orm = await ormWith([Drifted as unknown as EntitySchema]);
    const drift = await schemaDrift(orm);
    expect(drift.sql).toBe((await orm.schema.getUpdateSchemaSQL({ wrap: false })).trim());
  });
});
