import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { launchChromium } from './support/browser.ts';
import { expectAccessible, logIn, openConsolePage, shot, unexpectedErrors } from './console-support.ts';
import { adminRequest } from '../integration/admin-support.ts';

/**
 * The Customers screen in a real Chromium against the real server: an owner
 * imports a CSV file (checked first: the refused rows listed with their line and
 * reason; then the valid rows imported), sees the customers masked, adds one, is
 * told which field is taken, edits one, removes a customer's phone (and is told
 * one of email and phone must stay), deletes one, and exports the CSV. At 1280
 * and 375 px, axe clean.
 */

let t: TestContext;
let browser: Browser;
let brandId: number;
const owner = { email: 'owner@customers.test', password: '' };

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  brandId = (await t.createBrand('Customer Shop')).brandId;
  const res = await adminRequest(t, 'POST', '/operators', { email: owner.email, name: 'The owner', role: 'owner' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  owner.password = res.body.data.password;
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

for (const width of [1280, 375] as const) {
  it(`owner at ${width} px: imports a CSV with a per-row report, adds, edits, removes a phone, deletes a customer, exports`, async () => {
    const n = width === 1280 ? '1' : '2';
    const csv = [
      'name,email,phone',
      `Import One ${n},one${n}@example.com,0171234${n}001`,
      `Bad Mail ${n},not-an-email,`,
      `Twice ${n},one${n}@example.com,`,
      `Import Two ${n},,0171234${n}002`,
    ].join('\n');
    const { ctx, page, errors } = await openConsolePage(browser, t.baseUrl, width);
    await page.goto(`${t.baseUrl}/admin/customers`);
    await logIn(page, owner.email, owner.password);
    await page.getByRole('heading', { name: 'Customers', level: 1 }).waitFor();
    await settled(page);

    // Import: check first (nothing written), then import the valid rows.
    await page.getByRole('button', { name: 'Import CSV' }).click();
    let dialog = page.getByRole('dialog');
    await dialog.getByLabel('CSV file').setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await dialog.getByRole('button', { name: 'Check file' }).click();
    const report = dialog.getByTestId('import-report');
    await report.getByText('customers.csv: 2 rows can be imported, 2 rows refused.').waitFor();
    const refused = await report.getByRole('table').innerText();
    expect(refused).toMatch(/3\s+bad email/);
    expect(refused).toMatch(/4\s+duplicate in the file/);
    expect(refused).toContain('Same email as line 2');
    expect((await adminRequest(t, 'GET', `/brands/${brandId}/customers`)).body.meta.total).toBe(width === 1280 ? 0 : 2);
    await expectAccessible(page, `customer import report at ${width}px`);
    await dialog.getByRole('button', { name: 'Import valid rows' }).click();
    await report.getByText('Imported 2 customers; 2 rows refused.').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    const list = page.getByRole('table', { name: 'Customers' });
    await expect.poll(() => list.innerText()).toContain(`Import One ${n}`);
    const listed = await list.innerText();
    expect(listed).toContain(`o***@example.com`);
    expect(listed).not.toContain(`one${n}@example.com`);
    expect(listed).toContain('+88017*****002');
    await settled(page);
    await expectAccessible(page, `customers at ${width}px`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, 'the screen scrolls sideways').toBeLessThanOrEqual(0);
    await shot(page, `customers-${width}`);

    // Add: a taken email is refused under the field.
    await page.getByRole('button', { name: 'Add customer' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(`Added ${n}`);
    await dialog.getByLabel('Email').fill(`ONE${n}@example.com`);
    await dialog.getByRole('button', { name: 'Add customer' }).click();
    const emailError = dialog.locator('#cu-email-error');
    await emailError.waitFor();
    expect(await emailError.innerText()).toContain('CUSTOMER_EMAIL_TAKEN');
    await expectAccessible(page, `customer form with an error at ${width}px`);
    await dialog.getByLabel('Email').fill(`added${n}@example.com`);
    await dialog.getByRole('button', { name: 'Add customer' }).click();
    await page.getByRole('status').filter({ hasText: `Added ${n} is added` }).waitFor();

    // Edit the name; the contact details stay.
    await page.getByRole('button', { name: `Edit Added ${n}` }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(`Renamed ${n}`);
    await dialog.getByRole('button', { name: 'Save customer' }).click();
    await page.getByRole('status').filter({ hasText: `Renamed ${n} is saved` }).waitFor();

    // Remove a detail: the phone of a customer who has both goes (value and keyed hash); removing the email then too is refused at
    // the email field, with nothing changed.
    const imported = async () => ((await adminRequest(t, 'GET', `/brands/${brandId}/customers`)).body.data as Array<{ id: number; name: string; phone_masked: string | null }>).find((c) => c.name === `Import One ${n}`)!;
    const stored = async (id: number) => (await t.sql('SELECT email_hash IS NOT NULL AS email, phone_hash IS NOT NULL AS phone, phone_encrypted IS NOT NULL AS phone_text FROM customers WHERE id = $1', [id]))[0];
    const one = await imported();
    expect(one.phone_masked).not.toBeNull();
    await page.getByRole('button', { name: `Edit Import One ${n}` }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Remove the phone').check();
    expect(await dialog.getByLabel('Phone', { exact: true }).isDisabled()).toBe(true);
    await expectAccessible(page, `customer edit with a removal ticked at ${width}px`);
    await dialog.getByRole('button', { name: 'Save customer' }).click();
    await page.getByRole('status').filter({ hasText: `Import One ${n} is saved` }).waitFor();
    expect((await imported()).phone_masked).toBeNull();
    expect(await stored(one.id)).toEqual({ email: true, phone: false, phone_text: false });
    // The list shows it gone (a dash in the phone cell), the email still there.
    const row = page.getByTestId(`customer-${one.id}`).getByRole('cell');
    await expect.poll(() => row.nth(2).innerText()).toBe('—');
    expect(await row.nth(1).innerText()).toBe('o***@example.com');
    await page.getByRole('button', { name: `Edit Import One ${n}` }).click();
    dialog = page.getByRole('dialog');
    expect(await dialog.getByLabel('Remove the phone').count()).toBe(0);
    await dialog.getByText('Now none; empty keeps it.').waitFor();
    await dialog.getByLabel('Remove the email').check();
    await dialog.getByRole('button', { name: 'Save customer' }).click();
    await expect.poll(() => dialog.locator('#cu-email-error').innerText()).toContain('A customer needs an email or a phone number');
    expect(await dialog.getByLabel('Email', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await stored(one.id)).toEqual({ email: true, phone: false, phone_text: false });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await row.nth(1).innerText()).toBe('o***@example.com');

    // Export: a CSV download with the details in clear.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^customers-brand-\d+-live-\d{4}-\d{2}-\d{2}\.csv$/);
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text.split(/\r?\n/)[0]).toBe('id,uuid,name,email,phone,created_at');
    expect(text).toContain(`Renamed ${n},added${n}@example.com,`);
    expect(text).toContain(`Import Two ${n},,'+880171234${n}002,`);

    // Delete (erase).
    await page.getByRole('button', { name: `Delete Renamed ${n}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete customer' }).click();
    await page.getByRole('status').filter({ hasText: 'is deleted' }).waitFor();
    await expect.poll(() => list.innerText()).not.toContain(`Renamed ${n}`);
    expect(unexpectedErrors(errors).filter((e) => !/status of 409/.test(e))).toEqual([]);
    await ctx.close();
  });
}
