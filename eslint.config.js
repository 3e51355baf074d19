import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'clients/*/dist/**', '.data/**', 'openapi/**', 'tmp/**', 'bench/results/**', 'test-results/**'] },
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
    files: ['scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
);
