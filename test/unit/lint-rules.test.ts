import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The repository's own lint configuration, run on a small tree of the same
 * shape (written to a temporary directory, so the repository itself never holds
 * the violations): an import cycle, every forbidden direction between layers and
 * comments citing outside documents must each fail `npm run lint`, and clean
 * files of the same kinds must pass.
 */
const config = path.resolve('eslint.config.js');
const eslintBin = path.resolve('node_modules/.bin/eslint');
let root: string;
let exitCode: number | null;
let results: Map<string, Array<{ ruleId: string | null; message: string }>>;

const files: Record<string, string> = {
  // A cycle of three domain files.
  'server/domain/a.ts': "import { b } from './b.ts';\nexport const a = (): number => b() + 1;\n",
  'server/domain/b.ts': "import { c } from './c.ts';\nexport const b = (): number => c() + 1;\n",
  'server/domain/c.ts': "import { a } from './a.ts';\nexport const c = (): number => (typeof a === 'function' ? 1 : 0);\n",
  // Layers pointing the wrong way.
  'server/infra/uses-domain.ts': "import { ok } from '../domain/ok.ts';\nexport const x = ok;\n",
  'server/infra/uses-http.ts': "import { handler } from '../http/handler.ts';\nexport const x = handler;\n",
  'server/domain/uses-http.ts': "import { handler } from '../http/handler.ts';\nexport const x = handler;\n",
  'contract/uses-server.ts': "import { ok } from '../server/domain/ok.ts';\nexport const x = ok;\n",
  'contract/uses-client.ts': "import { sdk } from '../clients/sdk.ts';\nexport const x = sdk;\n",
  'clients/uses-server.ts': "import { ok } from '../server/domain/ok.ts';\nexport const x = ok;\n",
  // Allowed directions.
  'server/infra/base.ts': 'export const base = 1;\n',
  'server/domain/ok.ts': "import { base } from '../infra/base.ts';\nimport { shape } from '../../contract/shape.ts';\nexport const ok = base + shape;\n",
  'server/http/handler.ts': "import { ok } from '../domain/ok.ts';\nimport { shape } from '../../contract/shape.ts';\nexport const handler = ok + shape;\n",
  'contract/shape.ts': 'export const shape = 1;\n',
  'clients/sdk.ts': "import { shape } from '../contract/shape.ts';\nexport const sdk = shape;\n",
  // Comments.
  'server/domain/cites-issue.ts': '// Retries are capped (issue 16).\nexport const one = 1;\n',
  'server/domain/cites-hash.ts': '/** See #16 for the reason. */\nexport const two = 2;\n',
  'server/domain/cites-design.ts': '// The payment shape follows design.md.\nexport const three = 3;\n',
  'server/domain/cites-shared.ts': '// Layout: see ../shared/conventions.md.\nexport const four = 4;\n',
  'server/domain/cites-spec.ts': "/** Refused with the spec's message. */\nexport const five = 5;\n",
  'server/domain/cites-repo-docs.ts':
    "// The payment shape: README.md, Merchant API; matching: docs/matching.md. Upstream bug: kysely-org/kysely#1990.\nexport const s = '#16 issue 16 design.md';\n",
};

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'lint-rules-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  // As `npm run lint` runs it: the CLI, in the tree's root (layer paths are relative to it).
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(eslintBin, ['--config', config, '--format', 'json', '.'], { cwd: root, maxBuffer: 16 << 20 }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
  exitCode = code;
  const linted = JSON.parse(stdout) as Array<{ filePath: string; messages: Array<{ ruleId: string | null; message: string }> }>;
  results = new Map(linted.map((r) => [path.relative(root, r.filePath), r.messages.map((m) => ({ ruleId: m.ruleId, message: m.message }))]));
}, 60_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const rulesOf = (name: string) => (results.get(name) ?? []).map((m) => m.ruleId);

it('fails the lint run', () => {
  expect(exitCode).toBe(1);
});

describe('lint: import cycles', () => {
  it('fails every file of a cycle', () => {
    for (const f of ['server/domain/a.ts', 'server/domain/b.ts', 'server/domain/c.ts']) expect(rulesOf(f), f).toContain('import-x/no-cycle');
  });
});

describe('lint: layers', () => {
  it.each([
    ['server/infra/uses-domain.ts'],
    ['server/infra/uses-http.ts'],
    ['server/domain/uses-http.ts'],
    ['contract/uses-server.ts'],
    ['contract/uses-client.ts'],
    ['clients/uses-server.ts'],
  ])('%s is refused', (f) => {
    expect(rulesOf(f)).toContain('import-x/no-restricted-paths');
  });

  it('lets http -> domain -> infra, and server and clients -> contract, pass', () => {
    for (const f of ['server/infra/base.ts', 'server/domain/ok.ts', 'server/http/handler.ts', 'contract/shape.ts', 'clients/sdk.ts']) expect(results.get(f), f).toEqual([]);
  });
});

describe('lint: comments stand alone', () => {
  it.each([['server/domain/cites-issue.ts'], ['server/domain/cites-hash.ts'], ['server/domain/cites-design.ts'], ['server/domain/cites-shared.ts'], ['server/domain/cites-spec.ts']])('%s is refused', (f) => {
    expect(rulesOf(f)).toEqual(['local/no-outside-citations']);
  });

  it('lets comments point to the repository docs and upstream owner/repo#N; strings are not comments', () => {
    expect(results.get('server/domain/cites-repo-docs.ts')).toEqual([]);
  });
});
