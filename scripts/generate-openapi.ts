import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderOpenApi } from './openapi/build.ts';
import { ownpayContract } from '../contract/ownpay/index.ts';
import { ownpayDeviceContract } from '../contract/ownpay/device.ts';

/**
 * `npm run openapi` writes openapi/openapi.json (the API) and
 * openapi/ownpay.json (the OwnPay dialect, README "Coming from OwnPay");
 * `--check` exits 1 when a committed file differs from a fresh generation
 * (CI's drift check).
 */
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi');
const documents = [
  { file: path.join(dir, 'openapi.json'), fresh: () => renderOpenApi() },
  {
    file: path.join(dir, 'ownpay.json'),
    fresh: () =>
      renderOpenApi({
        root: { ownpay: ownpayContract, ownpayDevice: ownpayDeviceContract },
        title: 'Payment Collection Service API: OwnPay dialect',
        description: [
          "The routes and shapes OwnPay's WooCommerce and WHMCS plugins and its Node and Laravel SDKs call, answered for `op_live_…`/`op_test_…` keys only (create one with `dialect: \"ownpay\"`).",
          'Any other key reaches the native routes of openapi.json. Routes of openapi.json not listed here answer `op_…` keys in their native shapes.',
          "The `OwnPay app` routes (`/api/mobile/v1`) are those OwnPay's Android app calls that the native device API does not answer in its shapes: pairing with the code in the body, token refresh for devices it paired, AES-256-GCM encrypted SMS upload and self-revocation. Its other calls (heartbeats, filter rules, notifications, dashboard) reach the native device routes of openapi.json.",
          'Webhook endpoints with `signing: "ownpay"` receive `{event, data, timestamp}` bodies with `X-Signature: sha256=<hex>` and `X-OwnPay-Signature: <hex>` (HMAC-SHA256 of the raw body with the endpoint secret), `X-Timestamp`, `X-OwnPay-Timestamp` and `X-Event`.',
        ].join('\n\n'),
        webhooks: false,
        codeSamples: false,
      }),
  },
];
let stale = false;
for (const { file, fresh } of documents) {
  const text = fresh();
  const name = path.relative(process.cwd(), file);
  if (process.argv.includes('--check')) {
    const current = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(`${name} is out of date with the contract: run \`npm run openapi\` and commit the result.\n`);
      stale = true;
    } else process.stdout.write(`${name} matches the contract.\n`);
  } else {
    writeFileSync(file, text);
    process.stdout.write(`wrote ${name}\n`);
  }
}
if (stale) process.exit(1);
