import { readFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { collectPageErrors } from './support/browser.ts';

/** Helpers of the console's browser tests (test/e2e/console*.e2e.test.ts). */

export const SHOTS = path.resolve('test-results', 'console');
mkdirSync(SHOTS, { recursive: true });

/** Screenshot at the page's current width, named `<name>-<width>.png`. */
export async function shot(page: Page, name: string): Promise<void> {
  const width = page.viewportSize()?.width ?? 0;
  await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core on the page as it is now. Its source is evaluated through the
 * DevTools protocol, which the page's CSP does not govern, so the console keeps
 * its real policy while it is checked. Returns every violation, of any impact
 * (critical, serious, moderate, minor), as readable lines.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate(() => typeof (window as unknown as { axe?: unknown }).axe !== 'undefined');
  if (!loaded) await page.evaluate(axeSource);
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  })) as AxeViolation[];
  return violations.map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** No axe violation of any impact: a minor one is still a barrier to someone. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  expect(await axeViolations(page), `axe violations on ${screen}`).toEqual([]);
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
