import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The repository's own lint configuration, run on a small tree of the same
 * shape (written to a temporary directory, so the repository itself never holds
 * the violations): an import cycle, every forbidden direction between layers, an
 * entity or an area's queries importing more of the contract than its vocabulary, and comments citing
 * outside documents must each fail `npm run lint`, and clean files of the same
 * kinds must pass.
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
  // A cycle between two console (.tsx) files.
  'admin-ui/src/screen-a.tsx': "import { b } from './screen-b.tsx';\nexport const a = (): number => b() + 1;\n",
  'admin-ui/src/screen-b.tsx': "import { a } from './screen-a.tsx';\nexport const b = (): number => (typeof a === 'function' ? 1 : 0);\n",
  // Layers pointing the wrong way.
  'server/infra/uses-domain.ts': "import { ok } from '../domain/ok.ts';\nexport const x = ok;\n",
  'server/infra/uses-http.ts': "import { handler } from '../http/handler.ts';\nexport const x = handler;\n",
  'server/domain/uses-http.ts': "import { handler } from '../http/handler.ts';\nexport const x = handler;\n",
  'contract/uses-server.ts': "import { ok } from '../server/domain/ok.ts';\nexport const x = ok;\n",
  'contract/uses-client.ts': "import { sdk } from '../clients/sdk.ts';\nexport const x = sdk;\n",
  'clients/uses-server.ts': "import { ok } from '../server/domain/ok.ts';\nexport const x = ok;\n",
  'clients/uses-console.ts': "import { page } from '../admin-ui/src/page.tsx';\nexport const x = page;\n",
  'contract/uses-console.ts': "import { page } from '../admin-ui/src/page.tsx';\nexport const x = page;\n",
  'server/infra/uses-checkout.ts': "import { render } from '../http/checkout-pages/render.ts';\nexport const x = render;\n",
  'server/domain/uses-checkout.ts': "import { render } from '../http/checkout-pages/render.ts';\nexport const x = render;\n",
  'server/infra/uses-app.ts': "import { app } from '../app.ts';\nexport const x = app;\n",
  'server/domain/uses-app.ts': "import { app } from '../app.ts';\nexport const x = app;\n",
  // The console is .tsx: the zones must reach those files too.
  'admin-ui/src/uses-server.tsx': "import { ok } from '../../server/domain/ok.ts';\nexport const x = ok;\n",
  'admin-ui/src/uses-server-ts.ts': "import { ok } from '../../server/domain/ok.ts';\nexport const x = ok;\n",
  'admin-ui/src/uses-client.tsx': "import { sdk } from '../../clients/sdk.ts';\nexport const x = sdk;\n",
  // Entities take the vocabulary of the contract, nothing else (no wire schema).
  'server/domain/pay/entities.ts': "import { shape } from '../../../contract/shape.ts';\nimport { statuses } from '../../../contract/vocabulary.ts';\nexport const e = [shape, statuses];\n",
  'server/domain/pay/nested/entities.ts': "import { shape } from '../../../../contract/shape.ts';\nexport const e = shape;\n",
  'server/domain/entities.ts': "import { shape } from '../../contract/shape.ts';\nexport const e = shape;\n",
  // The SMS module's parts are its own: the rest goes through its index (or wording.ts).
  'server/domain/sms/matching/decide.ts': "import { word } from '../templates/word.ts';\nexport const decide = word;\n",
  'server/domain/sms/templates/word.ts': 'export const word = 1;\n',
  'server/domain/sms/index.ts': "export { decide } from './matching/decide.ts';\n",
  'server/domain/sms/wording.ts': "export { word } from './templates/word.ts';\n",
  'server/domain/pay/uses-sms-part.ts': "import { decide } from '../sms/matching/decide.ts';\nexport const x = decide;\n",
  'server/http/uses-sms-part.ts': "import { word } from '../domain/sms/templates/word.ts';\nexport const x = word;\n",
  'server/domain/pay/uses-sms.ts': "import { decide } from '../sms/index.ts';\nimport { word } from '../sms/wording.ts';\nexport const x = decide + word;\n",
  'server/domain/jobs.ts': "import { decide } from './sms/matching/decide.ts';\nexport const jobs = [decide];\n",
  // Queries, like entities, take the vocabulary of the contract and nothing else.
  'server/domain/pay/queries.ts': "import { shape } from '../../../contract/shape.ts';\nimport { statuses } from '../../../contract/vocabulary.ts';\nexport const q = [shape, statuses];\n",
  'server/domain/pay/queries/reads.ts': "import { shape } from '../../../../contract/shape.ts';\nexport const q = shape;\n",
  'server/domain/pay/queries/deep/writes.ts': "import { shape } from '../../../../../contract/shape.ts';\nexport const q = shape;\n",
  'server/domain/vocab/queries.ts': "import { statuses } from '../../../contract/vocabulary.ts';\nexport const q = statuses;\n",
  'server/domain/vocab/queries/reads.ts': "import { statuses } from '../../../../contract/vocabulary.ts';\nexport const q = statuses;\n",
  // Allowed directions.
  'server/infra/base.ts': 'export const base = 1;\n',
  'server/domain/ok.ts': "import { base } from '../infra/base.ts';\nimport { shape } from '../../contract/shape.ts';\nexport const ok = base + shape;\n",
  'server/http/handler.ts': "import { ok } from '../domain/ok.ts';\nimport { shape } from '../../contract/shape.ts';\nexport const handler = ok + shape;\n",
  'contract/shape.ts': 'export const shape = 1;\n',
  'clients/sdk.ts': "import { shape } from '../contract/shape.ts';\nexport const sdk = shape;\n",
  // The vocabulary imports nothing (here it brings zod along, and is refused for it).
  'contract/vocabulary.ts': "import { z } from 'zod';\nexport const statuses = ['open', 'closed'] as const;\nexport const statusSchema = z.enum(statuses);\n",
  'server/domain/vocab/entities.ts': "import { statuses } from '../../../contract/vocabulary.ts';\nexport const e = statuses;\n",
  'server/domain/vocab/service.ts': "import { shape } from '../../../contract/shape.ts';\nimport { e } from './entities.ts';\nexport const s = [shape, e];\n",
  'server/http/checkout-pages/render.ts': "import { ok } from '../../domain/ok.ts';\nexport const render = ok;\n",
  'server/app.ts': "import { handler } from './http/handler.ts';\nimport { render } from './http/checkout-pages/render.ts';\nexport const app = [handler, render];\n",
  'admin-ui/src/page.tsx': "import { shape } from '../../contract/shape.ts';\nexport const page = shape;\n",
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

  it('follows the console .tsx files too', () => {
    for (const f of ['admin-ui/src/screen-a.tsx', 'admin-ui/src/screen-b.tsx']) expect(rulesOf(f), f).toContain('import-x/no-cycle');
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
    ['clients/uses-console.ts'],
    ['contract/uses-console.ts'],
    ['server/infra/uses-checkout.ts'],
    ['server/domain/uses-checkout.ts'],
    ['server/infra/uses-app.ts'],
    ['server/domain/uses-app.ts'],
    ['admin-ui/src/uses-server.tsx'],
    ['admin-ui/src/uses-server-ts.ts'],
    ['admin-ui/src/uses-client.tsx'],
    ['server/domain/pay/uses-sms-part.ts'],
    ['server/http/uses-sms-part.ts'],
  ])('%s is refused', (f) => {
    expect(rulesOf(f)).toContain('import-x/no-restricted-paths');
  });

  it('lets the SMS module use its own parts, the rest its index and wording.ts, and the job registry reach in', () => {
    for (const f of ['server/domain/sms/matching/decide.ts', 'server/domain/sms/index.ts', 'server/domain/sms/wording.ts', 'server/domain/pay/uses-sms.ts', 'server/domain/jobs.ts'])
      expect(results.get(f), f).toEqual([]);
  });

  it('lets http -> domain -> infra, and server, clients and console -> contract, pass', () => {
    for (const f of ['server/infra/base.ts', 'server/domain/ok.ts', 'server/http/handler.ts', 'server/http/checkout-pages/render.ts', 'server/app.ts', 'contract/shape.ts', 'clients/sdk.ts', 'admin-ui/src/page.tsx'])
      expect(results.get(f), f).toEqual([]);
  });
});

describe('lint: entities take only the vocabulary from the contract', () => {
  it.each([['server/domain/pay/entities.ts'], ['server/domain/pay/nested/entities.ts'], ['server/domain/entities.ts']])('%s, importing a wire module, is refused', (f) => {
    const messages = (results.get(f) ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths');
    // One refusal: the wire module's import, not the vocabulary's.
    expect(messages, f).toHaveLength(1);
    expect(messages[0]!.message).toContain('contract/vocabulary.ts');
  });

  it('lets an entity import the vocabulary, and other domain code import the rest of the contract', () => {
    for (const f of ['server/domain/vocab/entities.ts', 'server/domain/vocab/service.ts']) expect(results.get(f), f).toEqual([]);
  });

  it('keeps the vocabulary free of imports (no zod, no wire schema)', () => {
    expect(rulesOf('contract/vocabulary.ts')).toEqual(['no-restricted-imports']);
  });
});

describe('lint: queries take only the vocabulary from the contract', () => {
  it.each([['server/domain/pay/queries.ts'], ['server/domain/pay/queries/reads.ts'], ['server/domain/pay/queries/deep/writes.ts']])('%s, importing a wire module, is refused', (f) => {
    const messages = (results.get(f) ?? []).filter((m) => m.ruleId === 'import-x/no-restricted-paths');
    // One refusal: the wire module's import, not the vocabulary's.
    expect(messages, f).toHaveLength(1);
    expect(messages[0]!.message).toContain('contract/vocabulary.ts');
  });

  it('lets queries import the vocabulary', () => {
    for (const f of ['server/domain/vocab/queries.ts', 'server/domain/vocab/queries/reads.ts']) expect(results.get(f), f).toEqual([]);
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
