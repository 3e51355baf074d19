import { describe, expect, it } from 'vitest';
import { GroupWaitTimeout, grouped } from '../../server/infra/database/grouped.ts';
import { isDatabaseUnavailable } from '../../server/http/errors.ts';

/** A run whose calls are recorded and finished by the test, one at a time. */
function controlledRun() {
  const calls: Array<{ items: string[]; finish(results?: string[]): void; fail(err: Error): void }> = [];
  const run = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ items, finish: (results) => resolve(results ?? items.map((i) => `done:${i}`)), fail: reject });
    });
  return { calls, run };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('grouped', () => {
  it('runs a lone item at once, alone', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 10 });
    const a = submit('a');
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a']]);
    calls[0]!.finish();
    expect(await a).toBe('done:a');
  });

  it('items arriving while a run is in flight go together in the next run, in arrival order, each with its own result', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 10 });
    const first = submit('a');
    const later = ['b', 'c', 'd'].map((x) => submit(x));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a']]);
    calls[0]!.finish();
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c', 'd']]);
    calls[1]!.finish(['1', '2', '3']);
    expect(await first).toBe('done:a');
    expect(await Promise.all(later)).toEqual(['1', '2', '3']);
  });

  it('splits a queue longer than maxBatch into several runs', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 2 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((x) => submit(x));
    for (let i = 0; i < 4; i++) {
      await tick();
      calls[i]?.finish();
    }
    await Promise.all(all);
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });

  it('a failing run fails its own items only; the next group still runs', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 10 });
    const a = submit('a');
    const b = submit('b');
    await tick();
    calls[0]!.fail(new Error('database gone'));
    await expect(a).rejects.toThrow('database gone');
    await tick();
    calls[1]!.finish();
    expect(await b).toBe('done:b');
  });

  it('refuses a run that answers another number of results than items', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 10 });
    const a = submit('a');
    await tick();
    calls[0]!.finish(['x', 'y']);
    await expect(a).rejects.toThrow('grouped run answered 2 results for 1 items');
  });
  it('an item queued behind a stuck statement fails after queueTimeoutMs (as a database timeout); the stuck one is not abandoned', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 10, queueTimeoutMs: 30 });
    const a = submit('a');
    await tick();
    const b = submit('b');
    const refused = await b.then(() => null, (err: unknown) => err);
    expect(refused).toBeInstanceOf(GroupWaitTimeout);
    expect(isDatabaseUnavailable(refused)).toBe(true);
    calls[0]!.finish();
    expect(await a).toBe('done:a');
    await tick();
    // b left the queue: no statement runs for it.
    expect(calls.map((c) => c.items)).toEqual([['a']]);
  });
  it('with concurrency 2, a second statement starts while the first is in flight; later items group behind them', async () => {
    const { calls, run } = controlledRun();
    const submit = grouped(run, { maxBatch: 10, concurrency: 2 });
    const all = ['a', 'b', 'c', 'd'].map((x) => submit(x));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b']]);
    calls[1]!.finish();
    await tick();
    expect(calls.map((c) => c.items)).toEqual([['a'], ['b'], ['c', 'd']]);
    calls[0]!.finish();
    calls[2]!.finish();
    expect(await Promise.all(all)).toEqual(['done:a', 'done:b', 'done:c', 'done:d']);
  });
});
