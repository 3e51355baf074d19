import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { pairDevice, type PairedDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway, seedTransaction } from '../support/seed.ts';
import { bdNow, forwardSms, newGatewayTrxId, smsBodies } from '../support/sms-matching.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { dhakaToday } from '../../server/domain/reconciliation/service.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The Reconciliation screen in a real Chromium against the real server: an
 * operator uploads a bKash statement for an account and today, reads the
 * findings, follows a `statement_only` finding to the payment's page where it is
 * verified, downloads the CSV, and sees bad rows listed by line when a file
 * cannot be read. At 1280 and 375 px, axe clean.
 */

let t: TestContext;
let browser: Browser;
let gateway: GatewayView;
let brandId: number;
let apiKey: string;
let phone: PairedDevice;
let accountNumber: string;
const operator = { email: 'operator@recon.test', password: '' };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  gateway = await seedGateway(t, 'bkash', { code: 'rc-bkash', name: 'bKash' });
  ({ brandId, apiKey } = await t.createBrand('Recon Shop'));
  phone = await pairDevice(t, { brandId, name: 'Counter phone' });
  accountNumber = '01799100001';
  const account = await adminRequest(t, 'POST', `/brands/${brandId}/wallet-accounts`, { gateway: 'rc-bkash', number: accountNumber, label: 'Counter bKash', device_id: phone.deviceId });
  expect(account.status, JSON.stringify(account.body)).toBe(201);
  const res = await adminRequest(t, 'POST', '/operators', { email: operator.email, name: 'The operator', role: 'operator' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  operator.password = res.body.data.password;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function settled(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.getByRole('status').filter({ hasText: /^Loading/ }).waitFor({ state: 'detached' }).catch(() => undefined);
}

async function noSidewaysScroll(page: Page, name: string): Promise<void> {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
}

const HEADER = 'SL,Trx Id,Transaction Date,Trx Type,Sender,Receiver,Receiver Name,Reference,Transacted Amount,Fee,Balance';

for (const width of [1280, 375] as const) {
  it(`operator at ${width} px: uploads a statement, reads the findings, verifies the missed payment on its page, downloads the CSV`, async () => {
    const seen = newGatewayTrxId('S');
    const missed = newGatewayTrxId('M');
    await forwardSms(t, phone, [{ sender: 'bKash', body: smsBodies.bkash('410.00', seen) }]);
    const claimed = await seedTransaction(t, { apiKey, gateway, status: 'awaiting_verification', amount: '620.00', gatewayTrxId: missed });
    const now = bdNow('dmy');
    const statement = [
      HEADER,
      `1,${seen},${now},Send Money,01712345678,${accountNumber},Shop,,410.00,0.00,"1,410.00"`,
      `2,${missed},${now},Send Money,01812000002,${accountNumber},Shop,,620.00,0.00,"2,030.00"`,
    ].join('\n');

    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, width);
    await page.goto(`${t.baseUrl}/admin/reconciliation`);
    await logIn(page, operator.email, operator.password);
    await page.getByRole('heading', { name: 'Statement reconciliation' }).waitFor();
    await settled(page);
    await expectAccessible(page, `reconciliation at ${width}px`);
    await noSidewaysScroll(page, `reconciliation at ${width}px`);

    // A file with a bad row: refused, each row named by its line.
    await page.getByLabel('Day (Asia/Dhaka)').fill(dhakaToday());
    await page.getByLabel('Statement file (CSV or text)').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(`${HEADER}\n1,${missed},${now},Send Money,01812000002,${accountNumber},Shop,,6x0.00,0.00,1.00\n`) });
    await page.getByRole('button', { name: 'Upload and reconcile' }).click();
    const rows = page.getByRole('list', { name: 'Rows that cannot be read' });
    await rows.waitFor();
    expect(await rows.innerText()).toContain('line 2, column Transacted Amount: not an amount ("6x0.00")');
    await expectAccessible(page, `reconciliation with bad rows at ${width}px`);

    // The real statement.
    await page.getByLabel('Statement file (CSV or text)').setInputFiles({ name: 'statement.csv', mimeType: 'text/csv', buffer: Buffer.from(statement) });
    await page.getByRole('button', { name: 'Upload and reconcile' }).click();
    await page.getByRole('heading', { name: `Reconciliation of rc-bkash ${accountNumber}, ${dhakaToday()}` }).waitFor();
    await settled(page);
    const missedRow = page.getByTestId(`finding-${missed}`);
    expect(await missedRow.innerText()).toContain('money, no SMS');
    expect(await missedRow.innerText()).toContain('01812000002');
    expect(await page.getByTestId(`finding-${seen}`).innerText()).toContain('matched');
    await expectAccessible(page, `reconciliation report at ${width}px`);
    await noSidewaysScroll(page, `reconciliation report at ${width}px`);
    await shot(page, 'reconciliation-report');

    // Download.
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(file.suggestedFilename()).toMatch(/^reconciliation-rc-bkash-01799100001-\d{4}-\d{2}-\d{2}-\d+\.csv$/);
    const csv = await readFile((await file.path())!, 'utf8');
    expect(csv.split('\r\n')[0]).toMatch(/^category,trx_id,line,/);
    expect(csv).toContain(`statement_only,${missed},3,`);

    // Nothing was completed by the upload; the person verifies on the payment's page.
    expect((await t.sql<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [claimed.transaction.id]))[0]!.status).toBe('awaiting_verification');
    await missedRow.getByRole('link', { name: `Open the payment to verify it for ${missed}` }).click();
    await page.waitForURL(`**/admin/payments/${claimed.transaction.id}`);
    expect(unexpectedErrors(errors).filter((e) => !/status of 422/.test(e))).toEqual([]);
    await ctx.close();
  });
}
