import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pairDevice } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway, seedTransaction } from '../support/seed.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The Wallet accounts screen in a real Chromium against the real server: an
 * owner adds an account bound to a phone and SIM slot, sees it, edits it, is
 * told CONFLICT under the number for a duplicate and when deleting an account
 * paid into, and deletes one; a viewer reads the list without any control.
 * At 1280 and 375 px, axe clean.
 */

let t: TestContext;
let browser: Browser;
let gateway: GatewayView;
let brandId: number;
let apiKey: string;
const users: Record<'owner' | 'viewer', { email: string; password: string }> = {} as never;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false', RATE_LIMIT_PAIRING: 'off' });
  gateway = await seedGateway(t, 'bkash', { code: 'wa-bkash', name: 'bKash' });
  ({ brandId, apiKey } = await t.createBrand('Wallet Shop'));
  await pairDevice(t, { brandId, name: 'Counter phone' });
  for (const role of ['owner', 'viewer'] as const) {
    const res = await adminRequest(t, 'POST', '/operators', { email: `${role}@wallet.test`, name: `The ${role}`, role });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    users[role] = { email: `${role}@wallet.test`, password: res.body.data.password };
  }
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

for (const width of [1280, 375] as const) {
  it(`owner at ${width} px: adds an account on a phone and SIM, edits it, sees CONFLICT for a duplicate number and for deleting a paid-into account, deletes one`, async () => {
    const number = width === 1280 ? '01799000001' : '01799000101';
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, width);
    await page.goto(`${t.baseUrl}/admin/wallet-accounts`);
    await logIn(page, users.owner.email, users.owner.password);
    await page.getByRole('heading', { name: 'Wallet accounts' }).waitFor();
    await settled(page);

    // Add: gateway, number, phone and SIM slot.
    await page.getByRole('button', { name: 'Add account' }).click();
    let dialog = page.getByRole('dialog');
    await dialog.getByLabel('Gateway').selectOption('wa-bkash');
    await dialog.getByLabel('Wallet number').fill(number);
    await dialog.getByLabel('Account type').selectOption('agent');
    await dialog.getByLabel('Label').fill('Counter bKash');
    await dialog.getByLabel('Daily limit').fill('25000.00');
    await dialog.getByLabel('Phone').selectOption({ label: 'Counter phone' });
    await dialog.getByLabel('SIM slot').selectOption({ label: 'SIM 2 (slot 1)' });
    await expectAccessible(page, `wallet account form at ${width}px`);
    await dialog.getByRole('button', { name: 'Add account' }).click();
    await page.getByRole('status').filter({ hasText: 'Counter bKash is added' }).waitFor();
    const [created] = (await adminRequest(t, 'GET', `/brands/${brandId}/wallet-accounts`)).body.data.filter((a: { number: string }) => a.number === number);
    expect(created).toMatchObject({ gateway: 'wa-bkash', account_type: 'agent', label: 'Counter bKash', daily_limit: '25000.00', sim_slot: 1, enabled: true });
    expect(created.device_id).toEqual(expect.any(Number));
    const row = page.getByTestId(`wallet-account-${created.id}`);
    const text = await row.innerText();
    for (const part of [number, 'bKash', 'Counter bKash', 'agent', 'Counter phone', 'SIM 2 (slot 1)', '0.00', 'of 25,000.00', 'enabled', 'never']) expect(text).toContain(part);
    await settled(page);
    await expectAccessible(page, `wallet accounts at ${width}px`);
    await noSidewaysScroll(page, `wallet accounts at ${width}px`);
    await shot(page, 'wallet-accounts');

    // Edit: the first SIM, no limit.
    await page.getByRole('button', { name: `Edit ${number}` }).click();
    dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('Wallet number').inputValue()).toBe(number);
    await dialog.getByLabel('SIM slot').selectOption({ label: 'SIM 1 (slot 0)' });
    await dialog.getByLabel('Daily limit').fill('');
    await dialog.getByRole('button', { name: 'Save account' }).click();
    await page.getByRole('status').filter({ hasText: 'Counter bKash is saved' }).waitFor();
    await expect.poll(() => row.innerText()).toContain('SIM 1 (slot 0)');
    expect(await row.innerText()).toContain('no daily limit');

    // Disable, then enable again.
    await page.getByRole('button', { name: `Disable ${number}` }).click();
    await expect.poll(() => row.innerText()).toContain('disabled');
    await page.getByRole('button', { name: `Enable ${number}` }).click();
    await page.getByRole('button', { name: `Disable ${number}` }).waitFor();

    // A duplicate number: CONFLICT under the number field, nothing added.
    await page.getByRole('button', { name: 'Add account' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Gateway').selectOption('wa-bkash');
    await dialog.getByLabel('Wallet number').fill(number);
    await dialog.getByRole('button', { name: 'Add account' }).click();
    const numberError = dialog.locator('#wa-number-error');
    await numberError.waitFor();
    expect(await numberError.innerText()).toContain('The brand already has this number on this gateway');
    expect(await numberError.innerText()).toContain('CONFLICT');
    expect(await dialog.getByLabel('Wallet number').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, `wallet account form with an error at ${width}px`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/wallet-accounts`)).body.data.filter((a: { number: string }) => a.number === number)).toHaveLength(1);

    // Deleting an account a payment was made into: CONFLICT, it stays.
    const paid = await seedTransaction(t, { apiKey, gateway, status: 'pending' });
    await t.sql('UPDATE transactions SET wallet_account_id = $1 WHERE id = $2', [created.id, paid.transaction.id]);
    await page.getByRole('button', { name: `Delete ${number}` }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Delete account' }).click();
    const refusal = dialog.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.innerText()).toContain('Payments were made into this account: disable it instead');
    expect(await refusal.innerText()).toContain('CONFLICT');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // An account nothing was paid into is deleted.
    await t.sql('UPDATE transactions SET wallet_account_id = NULL WHERE id = $1', [paid.transaction.id]);
    await page.getByRole('button', { name: `Delete ${number}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete account' }).click();
    await page.getByRole('status').filter({ hasText: 'Counter bKash is deleted' }).waitFor();
    await row.waitFor({ state: 'detached' });
    expect(unexpectedErrors(errors).filter((e) => !/status of 409/.test(e))).toEqual([]);
    await ctx.close();
  });
}

it('a viewer reads the accounts, phone and SIM by name, at 375 px, with no control to change them', async () => {
  const made = await adminRequest(t, 'POST', `/brands/${brandId}/wallet-accounts`, { gateway: 'wa-bkash', number: '01799000201', label: 'Read me' });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, 375);
  await page.goto(`${t.baseUrl}/admin/wallet-accounts`);
  await logIn(page, users.viewer.email, users.viewer.password);
  await page.getByTestId(`wallet-account-${made.body.data.id}`).waitFor();
  await settled(page);
  expect(await page.getByTestId(`wallet-account-${made.body.data.id}`).innerText()).toContain('any phone');
  expect(await page.getByText('Only an owner can add or change wallet accounts.').count()).toBe(1);
  for (const name of ['Add account', 'Edit 01799000201', 'Disable 01799000201', 'Delete 01799000201']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
  await expectAccessible(page, 'wallet accounts (viewer) at 375px');
  await noSidewaysScroll(page, 'wallet accounts (viewer) at 375px');
  await shot(page, 'wallet-accounts-viewer');
  expect(unexpectedErrors(errors)).toEqual([]);
  await ctx.close();
});
