import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TSMigrationGenerator } from '@mikro-orm/migrations';

/**
 * Numbers taken by migrations written on branches that have not landed yet:
 * a generated migration never takes one of them. Drop an entry once its
 * migration is in `migrations/`.
 */
export const RESERVED_MIGRATION_NUMBERS: readonly number[] = [];

/** `add-payout-table` -> `AddPayoutTable`. */
function pascal(name: string): string {
  return name
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

/** The next free number: one past every migration on disk, in the index, and reserved. */
export function nextMigrationNumber(dir: string): number {
  const onDisk = readdirSync(dir)
    .map((f) => /^(\d{4})-.*\.ts$/.exec(f)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  const listed = [...readFileSync(path.join(dir, 'index.ts'), 'utf8').matchAll(/name: '(\d{4})-/g)].map((m) => Number(m[1]));
  return Math.max(0, ...onDisk, ...listed, ...RESERVED_MIGRATION_NUMBERS) + 1;
}

/** Adds the import and the `migrationsList` entry for a new migration to `index.ts`. */
export function registerMigration(dir: string, fileBase: string, className: string): void {
  const indexFile = path.join(dir, 'index.ts');
  const source = readFileSync(indexFile, 'utf8');
  const imports = [...source.matchAll(/^import \{ Migration\d{4}\w* \} from '\.\/[^']+';$/gm)];
  const last = imports.at(-1);
  const listEnd = source.lastIndexOf('];');
  if (!last || last.index === undefined || listEnd < 0) throw new Error(`${indexFile}: cannot find where to register the migration`);
  const afterImports = last.index + last[0].length;
  const updated =
    source.slice(0, afterImports) +
    `\nimport { ${className} } from './${fileBase}.ts';` +
    source.slice(afterImports, listEnd) +
    `  { name: '${fileBase}', class: ${className} },\n` +
    source.slice(listEnd);
  writeFileSync(indexFile, updated);
}

/**
 * MikroORM's TypeScript generator, writing files the way this project names
 * and lists them (`00NN-name.ts`, class `Migration00NNName`, registered in
 * `index.ts`) instead of timestamped names found by globbing.
 */
export class ProjectMigrationGenerator extends TSMigrationGenerator {
  override async generate(diff: { up: string[]; down: string[] }, dir?: string, name?: string): Promise<[string, string]> {
    if (!dir || !name) throw new Error('migration:create needs the migrations folder and a name');
    const number = String(nextMigrationNumber(dir)).padStart(4, '0');
    const fileBase = `${number}-${name}`;
    const className = `Migration${number}${pascal(name)}`;
    const blank = diff.up.length === 1 && diff.up[0] === 'select 1';
    const statements = (sqls: string[]) => sqls.map((sql) => this.createStatement(sql, 4)).join('');
    let code = `import { Migration } from '@mikro-orm/migrations';\n\n`;
    code += `/**\n * ${blank ? 'Written by hand' : 'Generated from the entities by `npm run migration:create`'}: say here what changes and why.\n */\n`;
    code += `export class ${className} extends Migration {\n`;
    code += `  override name = '${fileBase}';\n\n`;
    code += `  override up(): void {\n${blank ? '' : statements(diff.up)}  }\n`;
    if (!blank && diff.down.length > 0) code += `\n  override down(): void {\n${statements(diff.down)}  }\n`;
    code += `}\n`;
    writeFileSync(path.join(dir, `${fileBase}.ts`), code, { flush: true });
    registerMigration(dir, fileBase, className);
    return [code, `${fileBase}.ts`];
  }
}
