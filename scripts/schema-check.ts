import { entities } from '../server/domain/entities.ts';
import { createOrm, migrate } from '../server/infra/database/orm.ts';
import { checkSchema, describeSchemaCheck, schemaDrift } from '../server/infra/database/schema-diff.ts';
import { withScratchDatabase } from './schema/scratch-database.ts';

/**
 * `npm run schema:check` (part of `npm run check`): migrates a scratch database
 * and fails when it differs from the entities, printing the SQL that would
 * close the gap. `--all` prints the whole difference, allow-listed tables
 * included, and does not fail.
 */
const all = process.argv.includes('--all');

const output = await withScratchDatabase(async (url) => {
  const orm = await createOrm({ url, entities, poolMax: 2 });
  try {
    await migrate(orm);
    if (all) {
      const drift = await schemaDrift(orm);
      return { ok: true, text: drift.sql ? `Differing tables: ${drift.tables.join(', ')}\n\n${drift.sql}` : 'No difference.' };
    }
    const check = await checkSchema(orm);
    return { ok: check.ok, text: describeSchemaCheck(check) };
  } finally {
    await orm.close();
  }
});

(output.ok ? console.log : console.error)(output.text);
process.exitCode = output.ok ? 0 : 1;
