import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextMigrationNumber, ProjectMigrationGenerator, RESERVED_MIGRATION_NUMBERS } from '../../scripts/schema/migration-generator.ts';

/** `npm run migration:create` writes the project's numbered, listed migrations (not MikroORM's timestamped ones). */

let dir: string;
const index = (entries: string[]) =>
  entries.map((e) => `import { Migration${e.replace(/-/g, '')} } from './${e}.ts';`).join('\n') +
  `\n\nexport const migrationsList: MigrationObject[] = [\n${entries.map((e) => `  { name: '${e}', class: Migration${e.replace(/-/g, '')} },`).join('\n')}\n];\n`;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pc-migrations-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('migration generator', () => {
  it('takes one past every migration on disk, in the index and reserved', () => {
    writeFileSync(path.join(dir, 'index.ts'), index(['0001-a', '0030-b']));
    writeFileSync(path.join(dir, '0001-a.ts'), '');
    writeFileSync(path.join(dir, '0031-on-disk-only.ts'), '');
    expect(nextMigrationNumber(dir)).toBe(32);
    rmSync(path.join(dir, '0031-on-disk-only.ts'));
    writeFileSync(path.join(dir, 'index.ts'), index(['0001-a']));
    expect(nextMigrationNumber(dir)).toBe(Math.max(1, ...RESERVED_MIGRATION_NUMBERS) + 1);
  });

  it('writes 00NN-name.ts in the project style and registers it after the last one', async () => {
    writeFileSync(path.join(dir, 'index.ts'), index(['0040-x']));
    const generator = new ProjectMigrationGenerator(undefined as never, undefined as never, {} as never);
    const [code, fileName] = await generator.generate({ up: ['alter table "t" add "c" int null;', '', 'create index "t_c_idx" on "t" ("c");'], down: ['alter table "t" drop column "c";'] }, dir, 'add-t-c');
    expect(fileName).toBe('0041-add-t-c.ts');
    expect(readFileSync(path.join(dir, fileName), 'utf8')).toBe(code);
    expect(code).toContain('export class Migration0041AddTC extends Migration {');
    expect(code).toContain("override name = '0041-add-t-c';");
    expect(code).toContain('    this.addSql(`alter table "t" add "c" int null;`);\n\n    this.addSql(`create index');
    expect(code).toContain('override down(): void {\n    this.addSql(`alter table "t" drop column "c";`);');
    const updated = readFileSync(path.join(dir, 'index.ts'), 'utf8');
    expect(updated).toContain("import { Migration0040x } from './0040-x.ts';\nimport { Migration0041AddTC } from './0041-add-t-c.ts';");
    expect(updated).toContain("  { name: '0040-x', class: Migration0040x },\n  { name: '0041-add-t-c', class: Migration0041AddTC },\n];");
  });

  it('a blank migration has an empty up() and no down()', async () => {
    writeFileSync(path.join(dir, 'index.ts'), index(['0050-y']));
    const generator = new ProjectMigrationGenerator(undefined as never, undefined as never, {} as never);
    const [code] = await generator.generate({ up: ['select 1'], down: ['select 1'] }, dir, 'trigger');
    expect(code).toContain('override up(): void {\n  }');
    expect(code).not.toContain('down()');
  });
});
