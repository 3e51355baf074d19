import type { PgBoss } from 'pg-boss';
import type { TestContext } from './harness.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `read` until `done` holds or `ms` pass, and returns the last value read,
 * so the caller's assertion on it shows what was there when time ran out.
 */
export async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000, everyMs = 50): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > until) return v;
    await pause(everyMs);
  }
}

/**
 * Polls until `check` returns a truthy value and returns it; throws naming
 * `what` when `timeoutMs` pass first (for conditions with nothing to assert on).
 */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, what = 'condition'): Promise<T> {
  const value = await waitFor(check, (v) => Boolean(v), timeoutMs);
  if (!value) throw new Error(`${what} not reached within ${timeoutMs} ms`);
  return value;
}

/** Waits until pg-boss's job `id` of `queue` has completed or failed, and answers it as it then stands. */
export async function waitForJobFinished(boss: Pick<PgBoss, 'getJobById'>, queue: string, id: string, timeoutMs = 20_000) {
  return waitFor(
    () => boss.getJobById<unknown>(queue, id),
    (j) => j?.state === 'completed' || j?.state === 'failed',
    timeoutMs,
  );
}

/**
 * Waits until none of `queues` holds a job that is waiting (`created`, also
 * scheduled for later), waiting to be retried (`retry`) or running (`active`)
 * in pg-boss's job table. This is what "and nothing else happened" means for
 * work done through the job queue: once the queues that could do it are
 * drained, whatever they were going to do is done, so the assertion that
 * follows reads the final state instead of whatever a fixed sleep happened to
 * catch. Jobs scheduled for later are waited for too, so a retry the code
 * should not have scheduled shows up in the assertion instead of after it.
 */
export async function waitForQueuesDrained(t: Pick<TestContext, 'sql'>, queues: readonly string[], timeoutMs = 20_000): Promise<void> {
  const busy = () =>
    t.sql<{ name: string; state: string; n: number }>(
      `SELECT name, state::text, count(*)::int AS n FROM pgboss.job
        WHERE name = ANY($1) AND state IN ('created', 'retry', 'active') GROUP BY 1, 2 ORDER BY 1, 2`,
      [queues],
    );
  const left = await waitFor(busy, (rows) => rows.length === 0, timeoutMs);
  if (left.length) throw new Error(`queues not drained within ${timeoutMs} ms: ${left.map((r) => `${r.name} ${r.state} ×${r.n}`).join(', ')}`);
}

/**
 * Resolves once `n` sessions of the database `client` is connected to wait for
 * a lock: the moment a request is provably parked behind a test's lock, instead
 * of a sleep that hopes it got there.
 */
export async function waitForLockWaiters(client: { query(text: string): Promise<{ rows: Array<{ n: number }> }> }, n: number, timeoutMs = 20_000): Promise<void> {
  const waiting = async () => (await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0]!.n;
  const seen = await waitFor(waiting, (w) => w >= n, timeoutMs, 10);
  if (seen < n) throw new Error(`${seen} of ${n} sessions waited for a lock within ${timeoutMs} ms`);
}
