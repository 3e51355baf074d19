import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { axeViolationLines } from './support/axe.ts';
import { collectPageErrors } from './support/browser.ts';

/** Helpers of the console's browser tests (test/e2e/console*.e2e.test.ts). */

export const SHOTS = path.resolve('test-results', 'console');
mkdirSync(SHOTS, { recursive: true });

/** Screenshot at the page's current width, named `<name>-<width>.png`. */
export async function shot(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
}

/** No axe violation of any impact: a minor one is still a barrier to someone. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  expect(await axeViolationLines(page), `axe violations on ${screen}`).toEqual([]);
}

/**
 * The audit log's entries as the screen shows them at the page's width: the
 * table's rows on a wide screen, one card per entry on a phone (below 768 px).
 */
export function auditEntries(page: Page): Locator {
  return (page.viewportSize()?.width ?? 1280) < 768
    ? page.getByRole('list', { name: 'Audit log entries' }).getByRole('listitem')
    : page.getByRole('table', { name: 'Audit log' }).getByRole('row');
}

/** An audit entry's text as a person reads it: on a phone its folded change is opened first. */
export async function auditEntryText(page: Page, entry: Locator): Promise<string> {
  if ((page.viewportSize()?.width ?? 1280) < 768) {
    const change = entry.getByText('Change', { exact: true });
    if ((await change.count()) > 0 && !(await entry.locator('details').evaluate((d) => (d as HTMLDetailsElement).open))) await change.click();
  }
  return entry.innerText();
}

/** Fills the login form and submits it. */
export async function logIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/**
 * A fresh browser context at 1280 px (desktop) or 375 px (a phone), with the
 * page's console errors collected and any request leaving the service counted
 * as one.
 */
export async function openConsolePage(browser: Browser, baseUrl: string, width: 1280 | 375): Promise<{ ctx: BrowserContext; page: Page; errors: string[] }> {
  const ctx = await browser.newContext(
    width === 375 ? { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: 'en-US' } : { viewport: { width: 1280, height: 900 }, locale: 'en-US' },
  );
  const page = await ctx.newPage();
  const errors = collectPageErrors(page);
  page.on('request', (r) => {
    if (!r.url().startsWith(baseUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) errors.push(`foreign request ${r.url()}`);
  });
  return { ctx, page, errors };
}

/** Console errors other than the refusals a test provokes on purpose (they log as failed loads). */
export const unexpectedErrors = (errors: string[]) => errors.filter((e) => !/status of (400|401|403|429)/.test(e));
