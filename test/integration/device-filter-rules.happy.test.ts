import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateFilterRules } from '../../server/domain/filter-rules/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { deviceRequest, pairDevice, type PairedDevice } from '../support/device.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const rules = async (d: PairedDevice) => {
  const res = await deviceRequest(t, d, 'GET', '/config/filter-rules');
  expect(res.status).toBe(200);
  return res.body.data;
};
const update = (brandId: number, patch: Parameters<typeof updateFilterRules>[2]) => updateFilterRules(t.runtime.deps.orm.em.fork(), brandId, patch);

describe('GET config/filter-rules', () => {
  it('a new brand gets the defaults, version 1, stable across reads', async () => {
    const d = await pairDevice(t);
    const first = await rules(d);
    expect(Object.keys(first).sort()).toEqual(['allowed_senders', 'check_interval_hours', 'negative_keywords', 'positive_keywords', 'updated_at', 'version']);
    expect(first).toMatchObject({ version: 1, allowed_senders: ['bKash', 'NAGAD', '16216'], check_interval_hours: 6 });
    expect(first.negative_keywords).toEqual(expect.arrayContaining(['OTP', 'PIN', 'password', 'verification code', 'ওটিপি', 'পিন', 'পাসওয়ার্ড']));
    expect(first.positive_keywords).toEqual(expect.arrayContaining(['received', 'TrxID']));
    expect(first.updated_at).toMatch(/Z$/);
    expect(await rules(d)).toEqual(first);
  });

  it('every change bumps version by one; an update that changes nothing does not', async () => {
    const d = await pairDevice(t);
    const v1 = await rules(d);
    await update(d.brandId, { allowedSenders: ['bKash', 'NAGAD', '16216', 'upay'] });
    const v2 = await rules(d);
    expect(v2.version).toBe(2);
    expect(v2.allowed_senders).toEqual(['bKash', 'NAGAD', '16216', 'upay']);
    expect(Date.parse(v2.updated_at)).toBeGreaterThanOrEqual(Date.parse(v1.updated_at));
    await update(d.brandId, { allowedSenders: ['bKash', 'NAGAD', '16216', 'upay'], checkIntervalHours: 6 });
    expect((await rules(d)).version).toBe(2);
    await update(d.brandId, { checkIntervalHours: 12, negativeKeywords: [...v1.negative_keywords, 'secret'] });
    const v3 = await rules(d);
    expect(v3).toMatchObject({ version: 3, check_interval_hours: 12 });
    expect(v3.negative_keywords.at(-1)).toBe('secret');
  });

  it('rules are per brand', async () => {
    const a = await pairDevice(t);
    const b = await pairDevice(t);
    await update(a.brandId, { positiveKeywords: ['only-a'] });
    expect((await rules(a)).positive_keywords).toEqual(['only-a']);
    expect((await rules(b)).version).toBe(1);
    expect((await rules(b)).positive_keywords).not.toContain('only-a');
  });

  it('concurrent changes are serialised: no version is lost', async () => {
    const d = await pairDevice(t);
    await rules(d);
    await Promise.all([update(d.brandId, { checkIntervalHours: 2 }), update(d.brandId, { checkIntervalHours: 3 }), update(d.brandId, { checkIntervalHours: 4 })]);
    expect((await rules(d)).version).toBe(4);
  });

  it('updates are validated and trimmed; duplicates (ignoring case) are dropped', async () => {
    const d = await pairDevice(t);
    await expect(update(d.brandId, { negativeKeywords: ['OTP', '  '] })).rejects.toMatchObject({ code: 'VALIDATION_ERROR', field: 'negative_keywords.1' });
    await expect(update(d.brandId, { allowedSenders: ['x'.repeat(65)] })).rejects.toMatchObject({ field: 'allowed_senders.0' });
    await expect(update(d.brandId, { checkIntervalHours: 0 })).rejects.toMatchObject({ field: 'check_interval_hours' });
    await expect(update(d.brandId, { checkIntervalHours: 169 })).rejects.toMatchObject({ field: 'check_interval_hours' });
    await expect(update(d.brandId, { positiveKeywords: Array.from({ length: 101 }, (_, i) => `k${i}`) })).rejects.toMatchObject({ field: 'positive_keywords' });
    const saved = await update(d.brandId, { positiveKeywords: [' Received ', 'received', 'TrxID'] });
    expect(saved.positiveKeywords).toEqual(['Received', 'TrxID']);
    // Rejected updates did not bump the version.
    expect(saved.version).toBe(2);
  });
});
