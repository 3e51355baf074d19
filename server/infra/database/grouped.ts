/**
 * Group execution ("group commit"): items submitted while a statement for
 * earlier items is in flight wait for it, then go to the database together in
 * the next one. When idle an item is run at once (no timer, no added wait);
 * under load each waits at most for the statement in flight, and the number of
 * round trips and commits falls from one per item to one per group.
 *
 * Why: on the machines measured, a round trip (a socket write, a database
 * backend woken, a commit flushed) costs far more than the work in it, and a
 * hot path doing one per request was capped by that (BENCHMARKS.md). Used by
 * the rate limiter's counters and webhook delivery's bookkeeping.
 *
 * `run` gets the items in arrival order and must answer one result per item,
 * in the same order; if it throws, every item of that group fails with it.
 *
 * `concurrency` (default 1): how many statements may be in flight before items
 * queue. 2 keeps most of the saving under load and spares a request at moderate
 * load the wait for a statement that started just before it arrived.
 *
 * `queueTimeoutMs`: an item still waiting for its statement after this long
 * fails with `GroupWaitTimeout` (a statement in flight is not abandoned). Without
 * grouping each request would wait at most the pool's acquire timeout for a
 * connection; a statement stuck on a lock must not hold every request queued
 * behind it for longer than that.
 */
export class GroupWaitTimeout extends Error {
  constructor(ms: number) {
    // Worded like pg-pool's acquire timeout, so it is answered the same way (503, http/errors.ts).
    super(`timeout exceeded when trying to connect: waited ${ms} ms for a grouped statement`);
    this.name = 'GroupWaitTimeout';
  }
}

export function grouped<I, O>(run: (items: I[]) => Promise<O[]>, opts: { maxBatch: number; queueTimeoutMs?: number; concurrency?: number }): (item: I) => Promise<O> {
  let queue: Array<{ item: I; resolve(o: O): void; reject(e: unknown): void; timer?: NodeJS.Timeout }> = [];
  let inFlight = 0;
  const concurrency = opts.concurrency ?? 1;
  const busy = () => inFlight >= concurrency;
  const next = async () => {
    if (busy() || queue.length === 0) return;
    inFlight++;
    const group = queue.slice(0, opts.maxBatch);
    queue = queue.slice(group.length);
    for (const g of group) clearTimeout(g.timer);
    try {
      const results = await run(group.map((g) => g.item));
      if (results.length !== group.length) throw new Error(`grouped run answered ${results.length} results for ${group.length} items`);
      group.forEach((g, i) => g.resolve(results[i]!));
    } catch (err) {
      for (const g of group) g.reject(err);
    } finally {
      inFlight--;
      void next();
    }
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      const waiting: (typeof queue)[number] = { item, resolve, reject };
      if (opts.queueTimeoutMs !== undefined && busy()) {
        const ms = opts.queueTimeoutMs;
        waiting.timer = setTimeout(() => {
          queue = queue.filter((q) => q !== waiting);
          reject(new GroupWaitTimeout(ms));
        }, ms);
      }
      queue.push(waiting);
      void next();
    });
}
