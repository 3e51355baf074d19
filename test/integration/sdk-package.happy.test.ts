import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { newPairingCode } from '../support/device.ts';
import { buildPackage, packPackage } from '../../scripts/build-sdks.ts';

/*
 * The packages as an integrator gets them: built with tsc, packed with `npm pack`,
 * installed from the tarballs into a project of their own, type-checked there and
 * run against a live service.
 */

const root = path.resolve(import.meta.dirname, '../..');
let t: TestContext;
let dir: string;

function exec(cmd: string, args: string[], opts: { cwd: string; env?: Record<string, string> }) {
  // Asynchronous: the service under test runs in this process and must keep answering.
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const program = `
import {
  PaycollectMerchant, NotFoundError, PaycollectError, VERSION as MERCHANT_VERSION, webhooks,
  type Payment, type Refund, type Customer, type WebhookDelivery, type WebhookEvent, type ResponseMeta,
} from '@paycollect/merchant';
import { PaycollectDevice, PairingRequiredError, screenSms, type DeviceTokens } from '@paycollect/device';

const merchant = new PaycollectMerchant({ apiKey: process.env.API_KEY!, baseUrl: process.env.BASE_URL! });
const brand = await merchant.brand.retrieve();
const brandId: number = brand.id;
// @ts-expect-error the brand id is a number, so the declarations are real types, not any
const wrong: string = brand.id;

const created = await merchant.payments.create({ amount: '150.00', currency: 'BDT', reference: 'pkg-1', customer: { email: 'c1@example.com' } }, { idempotencyKey: 'pkg-order-1' });
const replayed = await merchant.payments.create({ amount: '150.00', currency: 'BDT', reference: 'pkg-1', customer: { email: 'c1@example.com' } }, { idempotencyKey: 'pkg-order-1' });
const last: ResponseMeta | null = merchant.lastResponse;
for (const email of ['c2@example.com', 'c3@example.com']) await merchant.payments.create({ amount: '50.00', currency: 'BDT', customer: { email } });
const payment = await merchant.payments.retrieve(created.payment_id);
const asModel: Payment = payment;
const viaAlias: Payment = await merchant.payments.get(created.payment_id);
// @ts-expect-error amounts are strings
const amountAsNumber: number = payment.amount;
// @ts-expect-error an unknown body field does not compile
void (() => merchant.payments.create({ amount: '1.00', currency: 'BDT', colour: 'red' }));
const refunds: Refund[] = (await merchant.refunds.list()).data;
let customer: Customer | null = null;
let deliveries: WebhookDelivery[] = [];
void customer; void deliveries;

let pages = 0;
const customers: string[] = [];
for await (const page of merchant.customers.list.pages({ per_page: 2 })) {
  pages++;
  customers.push(...page.data.map((c) => c.email_masked ?? ''));
}

let notFound = '';
try {
  await merchant.payments.retrieve('00000000-0000-4000-8000-000000000000');
} catch (err) {
  if (err instanceof NotFoundError && err instanceof PaycollectError) notFound = err.code + ' ' + err.status;
}

// A receiver's own test: sign a payload, verify it, narrow the union.
const secret = 'whsec_test_secret_for_the_package_test';
const sample: WebhookEvent = {
  id: 'evt_1', event: 'payment.completed', created_at: new Date().toISOString(), livemode: false,
  data: { payment_id: created.payment_id, amount: '150.00', currency: 'BDT', status: 'completed', trx_id: 'TRX1' },
};
const signed = webhooks.signTestPayload(sample, secret);
const event = merchant.webhooks.constructEvent(signed.body, signed.headers, secret);
let completedAmount = '';
if (event.event === 'payment.completed') {
  const amount: string = event.data.amount;
  completedAmount = amount;
} else if (event.event === 'device.online') {
  // @ts-expect-error a device event's data has no string amount (unknown members are \`unknown\`)
  const none: string = event.data.amount;
  void none;
}
let invalid = '';
try {
  const bad = JSON.stringify({ ...sample, data: { payment_id: 'nope' } });
  webhooks.constructEvent(bad, { 'x-webhook-signature': webhooks.generateTestHeaderString(bad, secret) }, secret);
} catch (err) {
  invalid = (err as { reason?: string }).reason ?? String(err);
}

const saved: DeviceTokens[] = [];
const device = new PaycollectDevice({ baseUrl: process.env.BASE_URL!, fingerprint: 'f'.repeat(32), onTokens: (p) => { saved.push(p); } });
const paired = await device.pair(process.env.PAIRING_CODE!, { device_name: 'Packaged app' });
const heartbeat = await device.devices.heartbeat({ battery_level: 90 });
const rules = await device.filterRules.retrieve();
const screened = screenSms(rules, { sender: 'bKash', body: 'Your OTP is 1234' });

let unpaired = '';
try {
  await new PaycollectDevice({ baseUrl: process.env.BASE_URL!, fingerprint: 'g'.repeat(32) }).dashboard.retrieve();
} catch (err) {
  if (err instanceof PairingRequiredError) unpaired = err.code;
}

console.log(JSON.stringify({
  MERCHANT_VERSION, brandId, status: payment.status, amount: payment.amount, alias: viaAlias.payment_id === payment.payment_id,
  pages, customers: customers.length, refunds: refunds.length, notFound,
  requestId: typeof payment.lastResponse.requestId, firstReplayed: created.lastResponse.idempotentReplayed,
  replayed: replayed.lastResponse.idempotentReplayed, samePayment: replayed.payment_id === created.payment_id,
  clientLast: last?.idempotentReplayed, idempotencyKey: last?.idempotencyKey,
  rateLimited: payment.lastResponse.rateLimit !== null && payment.lastResponse.rateLimit.remaining >= 0,
  completedAmount, invalid, enumerable: Object.keys(payment).includes('lastResponse'),
  tokenType: paired.token_type, saved: saved.length, serverTime: typeof heartbeat.server_time, deviceRequestId: typeof device.lastResponse?.requestId,
  screened, unpaired,
}));
void wrong; void amountAsNumber; void asModel;
`;

beforeAll(async () => {
  t = await startTestServer();
  dir = mkdtempSync(path.join(os.tmpdir(), 'sdk-consumer-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the SDK packages, installed from npm pack tarballs', () => {
  it('build, pack, install into a separate project, type-check and run against the live service', { timeout: 240_000 }, async () => {
    const tarballs = (['merchant', 'device'] as const).map((name) => {
      buildPackage(name);
      return packPackage(name, path.join(dir, 'tarballs'));
    });
    expect(tarballs.map((p) => path.basename(p))).toEqual(['paycollect-merchant-0.1.0.tgz', 'paycollect-device-0.1.0.tgz']);

    const app = path.join(dir, 'app');
    const files = (await exec('tar', ['-tzf', tarballs[0]!], { cwd: dir })).stdout.split('\n').filter(Boolean);
    expect(files).toContain('package/dist/clients/merchant/index.d.ts');
    expect(files).toContain('package/dist/contract/merchant/payments.js');
    // Only the built package: no sources, no server, no other surface's contract.
    expect(files.filter((f) => !f.startsWith('package/dist/')).sort()).toEqual(['package/README.md', 'package/package.json']);
    expect(files.some((f) => /\/server\/|\.ts$(?<!\.d\.ts)|contract\/admin/.test(f))).toBe(false);

    await exec('mkdir', ['-p', app], { cwd: dir });
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
    // The app brings its own zod; the SDKs take it as a peer instead of installing a second copy.
    const zodVersion = JSON.parse(readFileSync(path.join(root, 'node_modules/zod/package.json'), 'utf8')).version as string;
    const install = await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', `zod@${zodVersion}`, ...tarballs], { cwd: app });
    expect(install.code, install.stderr).toBe(0);
    for (const name of ['merchant', 'device']) {
      const installed = JSON.parse(readFileSync(path.join(app, `node_modules/@paycollect/${name}/package.json`), 'utf8'));
      expect(installed.dependencies).toEqual({ '@ts-rest/core': '3.53.0-rc.1' });
      expect(installed.peerDependencies).toEqual({ zod: '^4.6.0' });
      expect(existsSync(path.join(app, `node_modules/@paycollect/${name}/node_modules/zod`))).toBe(false);
    }

    writeFileSync(path.join(app, 'app.ts'), program);
    const tsconfig = (skipLibCheck: boolean) => ({
      compilerOptions: {
        target: 'ES2024', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck,
        lib: ['ES2024', 'DOM'], types: ['node'], typeRoots: [path.join(root, 'node_modules/@types')],
      },
      files: ['app.ts'],
    });
    // strict, and skipLibCheck off: every declaration the SDKs ship is checked, and none names ts-rest's zod 3 types.
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify(tsconfig(false)));
    const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
    const check = await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.code).toBe(0);

    const { brandId, apiKey } = await t.createBrand('Packaged Brand');
    await seedGateway(t, 'bkash');
    const env = { BASE_URL: t.baseUrl, API_KEY: apiKey, PAIRING_CODE: await newPairingCode(t, brandId) };
    const ran = await exec(process.execPath, ['app.ts'], { cwd: app, env });
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual({
      MERCHANT_VERSION: '0.1.0',
      brandId,
      status: 'pending',
      amount: '150.00',
      alias: true,
      pages: 2,
      customers: 3,
      refunds: 0,
      notFound: 'PAYMENT_NOT_FOUND 404',
      requestId: 'string',
      firstReplayed: false,
      replayed: true,
      samePayment: true,
      clientLast: true,
      idempotencyKey: 'pkg-order-1',
      rateLimited: true,
      completedAmount: '150.00',
      invalid: 'invalid_payload',
      enumerable: false,
      tokenType: 'Bearer',
      deviceRequestId: 'string',
      saved: 1,
      serverTime: 'string',
      screened: { forward: false, reason: 'negative_keyword' },
      unpaired: 'PAIRING_REQUIRED',
    });
  });
});
