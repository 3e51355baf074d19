import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import { noOutsideCitations } from './scripts/lint/no-outside-citations.js';

/**
 * Layers point one way: contract <- server/http -> domain -> infra, and
 * contract <- clients (docs/architecture.md). The checkout pages
 * (server/http/checkout-pages) are part of server/http, and the composition
 * root (app.ts, bootstrap.ts, main.ts) wires the layers, so nothing below
 * imports either. Paths are relative to the directory ESLint runs in (the
 * repository root; the lint rules test runs it on a fixture tree of the same
 * shape).
 */
const compositionRoot = ['./server/app.ts', './server/bootstrap.ts', './server/main.ts'];
export const layerZones = [
  { target: './server/infra', from: ['./server/domain', './server/http', ...compositionRoot], message: 'infra is the bottom layer: it must not import domain or http code (server/http) nor the composition root (pass what it needs in as arguments).' },
  { target: './server/domain', from: ['./server/http', ...compositionRoot], message: 'domain code must not import the http layer (server/http, the checkout pages included) nor the composition root (handlers call services, not the other way round).' },
  { target: './contract', from: ['./server', './clients', './admin-ui'], message: 'the contract is shared by the server, the SDKs and the console: it imports none of them.' },
  { target: './clients', from: ['./server', './admin-ui'], message: 'the SDKs are built from the contract alone: they must not import server or console code.' },
  { target: './admin-ui', from: ['./server', './clients'], message: 'the console runs in the browser and talks to the server through the admin contract only.' },
  // The SMS module has two ways in (server/domain/sms/index.ts, and wording.ts for
  // the pure wording that gateways and filter rules are built on); its parts are
  // its own. The registries of entities and jobs list every area's, so they may
  // reach in; so may the benchmarks and tests.
  {
    target: ['./server/http', './server/infra', './server/*.ts', './server/domain/db.ts', './server/domain/!(sms)/**', './scripts'],
    from: ['./server/domain/sms/intake', './server/domain/sms/matching', './server/domain/sms/templates'],
    message: 'outside the SMS module, import server/domain/sms/index.ts (or sms/wording.ts for sender, template and preset wording), not its parts.',
  },
  // An entity describes a table; of the contract it takes the shared words only
  // (statuses, modes), never a wire schema, so a change to the API's shape never
  // reaches the data layer by accident.
  {
    target: './server/domain/**/entities.ts',
    from: './contract',
    except: ['./vocabulary.ts'],
    message: 'an entity imports nothing from the contract but contract/vocabulary.ts (the statuses and modes the wire and the database share).',
  },
  // An area's queries (its `queries.ts`, or the files of its `queries/` folder) take
  // and return plain records: like an entity, they take the shared words of the
  // contract only, so the API's shape is translated in the service, not in the SQL.
  ...['./server/domain/**/queries.ts', './server/domain/**/queries/**'].map((target) => ({
    target,
    from: './contract',
    except: ['./vocabulary.ts'],
    message: 'queries import nothing from the contract but contract/vocabulary.ts (no wire schema in the data layer: the service translates).',
  })),
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'clients/*/dist/**', '.data/**', 'openapi/**', 'tmp/**', 'bench/results/**', 'test-results/**', 'admin-ui/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', performance: 'readonly', structuredClone: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', Headers: 'readonly', Response: 'readonly', Request: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', document: 'readonly', window: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      'no-console': 'error',
    },
  },
  {
    // The console (React): hooks called in a stable order, with the dependencies they read.
    files: ['admin-ui/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
  },
  {
    // import-x's own resolver (unrs-resolver) reads the `.ts` specifiers as files; its
    // no-cycle follows the imports across the whole tree (type-only ones are erased at
    // run time and do not count).
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs'],
    plugins: { 'import-x': importX, local: { rules: { 'no-outside-citations': noOutsideCitations } } },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.tsx', '.js', '.mjs'] })],
      // Imported files are parsed as TypeScript too, or no-cycle could not follow them.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs'],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'local/no-outside-citations': 'error',
    },
  },
  {
    // The vocabulary is words only: the entities, the SDKs and the console import it,
    // so it must not bring zod, a wire schema or server code along with it.
    files: ['contract/vocabulary.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['*'], message: 'contract/vocabulary.ts imports nothing: plain `as const` arrays and their types.' }] }] },
  },
  {
    files: ['scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
);
