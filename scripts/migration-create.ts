import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MikroORM } from '@mikro-orm/postgresql';
import { entities } from '../server/domain/entities.ts';
import { migrate, ormConfig } from '../server/infra/database/orm.ts';
import { TABLES_NOT_YET_MATCHING } from '../server/infra/database/schema-diff.ts';
import { ProjectMigrationGenerator } from './schema/migration-generator.ts';
import { withScratchDatabase } from './schema/scratch-database.ts';

/**
 * `npm run migration:create -- <name>`: migrates a scratch database with the
 * existing migrations, diffs it against the entities with MikroORM's migrator
 * and writes the difference as the next numbered migration, registered in
 * migrations/index.ts. `--blank` writes an empty one, for what entities cannot
 * declare (triggers, functions, data changes).
 */
const args = process.argv.slice(2);
const blank = args.includes('--blank');
const name = args.find((a) => !a.startsWith('--'));
if (!name || !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) {
  console.error('usage: npm run migration:create -- <name-in-kebab-case> [--blank]');
  process.exit(64);
}
const dir = fileURLToPath(new URL('../server/infra/database/migrations', import.meta.url));

const result = await withScratchDatabase(async (url) => {
  const base = ormConfig({ url, entities, poolMax: 2 });
  const orm = await MikroORM.init({
    ...base,
    migrations: { ...base.migrations, generator: ProjectMigrationGenerator },
    // Tables still being converted would otherwise show up as differences to "fix".
    schemaGenerator: { ...base.schemaGenerator, skipTables: [...(base.schemaGenerator?.skipTables ?? []), ...TABLES_NOT_YET_MATCHING] },
  });
  try {
    await migrate(orm);
    return await orm.migrator.create(dir, blank, false, name);
  } finally {
    await orm.close();
  }
});

if (!result.fileName) {
  console.log('The entities match the migrations: nothing to generate (use --blank for a hand-written migration).');
} else {
  console.log(`Wrote ${path.join(path.relative(process.cwd(), dir), result.fileName)} and registered it in index.ts:\n`);
  console.log(result.code);
  console.log('Describe the change in its doc comment, review the SQL, then run `npm run schema:check`.');
}
