import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { merchantContract } from '../contract/merchant/index.ts';
import { deviceContract } from '../contract/device/index.ts';
import { webhookEventSchemas } from '../contract/events.ts';
import { renderSdkTypes, type SdkTypesInput } from './sdk-types/generate.ts';

/**
 * `npm run sdk:types` writes clients/<sdk>/api.generated.ts from the contract;
 * `--check` exits 1 when a committed file differs from a fresh generation.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const SDK_TYPE_TARGETS: Array<{ file: string; input: SdkTypesInput }> = [
  {
    file: 'clients/merchant/api.generated.ts',
    input: {
      contractModule: 'contract/merchant/index.ts',
      contractExport: 'merchantContract',
      router: merchantContract,
      prefix: 'Merchant',
      events: { module: 'contract/events.ts', exportName: 'webhookEventSchemas', schemas: webhookEventSchemas },
    },
  },
  {
    file: 'clients/device/api.generated.ts',
    input: { contractModule: 'contract/device/index.ts', contractExport: 'deviceContract', router: deviceContract, prefix: 'Device' },
  },
];

/** Regenerates every target; returns the files whose text changed. */
export function writeSdkTypes(check = false): string[] {
  process.chdir(root);
  const stale: string[] = [];
  for (const { file, input } of SDK_TYPE_TARGETS) {
    const abs = path.join(root, file);
    const fresh = renderSdkTypes(input, abs);
    const current = existsSync(abs) ? readFileSync(abs, 'utf8') : '';
    if (current === fresh) continue;
    stale.push(file);
    if (!check) writeFileSync(abs, fresh);
  }
  return stale;
}

if (import.meta.main) {
  const check = process.argv.includes('--check');
  const stale = writeSdkTypes(check);
  if (check && stale.length) {
    process.stderr.write(`${stale.join(', ')} out of date with the contract: run \`npm run sdk:types\` and commit the result.\n`);
    process.exit(1);
  }
  process.stdout.write(check ? 'SDK types match the contract.\n' : stale.length ? `wrote ${stale.join(', ')}\n` : 'SDK types unchanged.\n');
}
