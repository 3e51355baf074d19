import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderOpenApi } from './openapi/build.ts';

/**
 * `npm run openapi` writes openapi/openapi.json; `--check` exits 1 when the
 * committed file differs from a fresh generation (CI's drift check).
 */
const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi', 'openapi.json');
const fresh = renderOpenApi();
if (process.argv.includes('--check')) {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
  if (current !== fresh) {
    process.stderr.write('openapi/openapi.json is out of date with the contract: run `npm run openapi` and commit the result.\n');
    process.exit(1);
  }
  process.stdout.write('openapi/openapi.json matches the contract.\n');
} else {
  writeFileSync(file, fresh);
  process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}
