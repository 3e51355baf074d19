import { transaction } from '../../server/domain/db.ts';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimKey, completeKey, type ClaimRequest } from '../../server/domain/idempotency/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';

let t: TestContext;
let brandA: number;
let brandB: number;

beforeAll(async () => {
  t = await startTestServer();
  brandA = (await t.createBrand('Claims A')).brandId;
  brandB = (await t.createBrand('Claims B')).brandId;
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;
let n = 0;
/** Request hashes are SHA-256 hex, as `requestHash` makes them. */
const h = (s: string) => createHash('sha256').update(s).digest('hex');
const fresh = () => `claim-${++n}-${Date.now()}`;

describe('claiming idempotency keys', () => {
  it('answers each request by the key it finds: run, replay, reused or in progress', async () => {
    const done = fresh();
    const doneOtherBody = fresh();
    const held = fresh();
    // Stored beforehand: a completed key, and one still held by a running request.
    const setup1 = await claimKey(em(), { brandId: brandA, mode: 'live', key: done, hash: h('h-done') });
    const setup2 = await claimKey(em(), { brandId: brandA, mode: 'live', key: doneOtherBody, hash: h('h-done2') });
    const setup3 = await claimKey(em(), { brandId: brandA, mode: 'live', key: held, hash: h('h-held') });
    expect([setup1.kind, setup2.kind, setup3.kind]).toEqual(['execute', 'execute', 'execute']);
    for (const [key, claim] of [[done, setup1], [doneOtherBody, setup2]] as const) {
      await transaction(em(), (tx) => completeKey(tx, { brandId: brandA, mode: 'live', key }, (claim as { token: string }).token, 201, '{"ok":true}'));
    }

    const shared = fresh();
    const group: ClaimRequest[] = [
      { brandId: brandA, mode: 'live', key: shared, hash: h('h1') }, // new: runs
      { brandId: brandB, mode: 'live', key: shared, hash: h('h1') }, // same key, other brand: runs too
      { brandId: brandA, mode: 'test', key: shared, hash: h('h1') }, // same key, other mode: another key, runs too
      { brandId: brandA, mode: 'live', key: shared, hash: h('h1') }, // same request again: the first holds it
      { brandId: brandA, mode: 'live', key: shared, hash: h('h2') }, // same key, other body
      { brandId: brandA, mode: 'live', key: done, hash: h('h-done') }, // completed: replayed
      { brandId: brandA, mode: 'live', key: doneOtherBody, hash: h('nope') }, // completed, other body
      { brandId: brandA, mode: 'live', key: held, hash: h('h-held') }, // still running elsewhere
      { brandId: brandA, mode: 'live', key: held, hash: h('h-other') },
    ];
    const claims = [];
    for (const r of group) claims.push(await claimKey(em(), r));
    expect(claims.map((c) => c.kind)).toEqual(['execute', 'execute', 'execute', 'in_progress', 'reused', 'replay', 'reused', 'in_progress', 'reused']);
    expect(claims[5]).toEqual({ kind: 'replay', status: 201, body: '{"ok":true}' });
    const rows = await t.sql<{ n: string }>('SELECT count(*) AS n FROM idempotency_keys WHERE key = $1', [shared]);
    expect(Number(rows[0]!.n)).toBe(3);
  });

  it('of racing requests with one key exactly one runs', async () => {
    const claim = (r: ClaimRequest) => claimKey(em(), r);
    const key = fresh();
    const requests: ClaimRequest[] = [
      ...Array.from({ length: 20 }, () => ({ brandId: brandA, mode: 'live' as const, key, hash: h('same') })),
      ...Array.from({ length: 40 }, () => ({ brandId: brandB, mode: 'live' as const, key: fresh(), hash: h('x') })),
    ];
    const claims = await Promise.all(requests.map((r) => claim(r)));
    expect(claims.slice(0, 20).filter((c) => c.kind === 'execute')).toHaveLength(1);
    expect(claims.slice(0, 20).filter((c) => c.kind === 'in_progress')).toHaveLength(19);
    expect(claims.slice(20).every((c) => c.kind === 'execute')).toBe(true);
  });
});
