import { fromKysely, type JobInsert, type PgBoss, type Queue, type SendOptions } from 'pg-boss';
import type { AnyDb } from '../database/database.ts';
import type { AppDeps } from '../../deps.ts';

/**
 * Background work. Each job module exports a registration; the list of them
 * (the registry) lives in server/domain/jobs.ts and is passed in here, so this
 * module knows no domain code:
 * - `queue`: created in every process at start, because any process may enqueue
 *   (an API-only process records events too);
 * - `start(deps)`: runs only where workers run (`WORKERS_ENABLED`) and returns
 *   how to stop what it started (pg-boss workers, periodic sweeps).
 *
 * `D` is what the job touches, declared by its module (a `Pick` of AppDeps):
 * the composition root passes its AppDeps to every `start`, and the type keeps a
 * job from reaching for more than it declares.
 */
export interface JobRegistration<D = AppDeps> {
  queue: Queue;
  start?: (deps: D) => Promise<{ stop(): Promise<void> }>;
}

// Keyed by the database's dialect adapter, which a Kysely instance and every
// transaction opened on it share (`getExecutor().adapter`, public API): code that
// only holds a transaction (recordEvent inside a caller's transaction) finds the
// job queue of its own runtime, and two runtimes in one process (tests) never see
// each other's.
const queues = new WeakMap<object, PgBoss>();
const keyOf = (db: AnyDb) => db.getExecutor().adapter;

/** Creates every queue and binds the job queue to the database. Run in every process, workers or not. */
export async function prepareJobs(deps: Pick<AppDeps, 'db' | 'boss'>, registrations: readonly JobRegistration[]): Promise<void> {
  for (const { queue } of registrations) {
    const { name, ...options } = queue;
    await deps.boss.createQueue(name, options);
  }
  queues.set(keyOf(deps.db), deps.boss);
}

export function unbindJobs(db: AnyDb): void {
  queues.delete(keyOf(db));
}

/**
 * Enqueues a job inside the caller's open transaction: the job row commits or
 * rolls back with the caller's change. pg-boss's own Kysely adapter runs its
 * statement on the transaction.
 */
export async function enqueueInTransaction(tx: AnyDb, name: string, data: object, options: Omit<SendOptions, 'db'> = {}): Promise<string | null> {
  return queueOf(tx, name).send(name, data, { ...options, db: fromKysely(tx) });
}

/**
 * enqueueInTransaction for several jobs of one queue, in one statement
 * (pg-boss's `insert`, on the caller's transaction through the same adapter).
 */
export async function enqueueManyInTransaction(tx: AnyDb, name: string, jobs: ReadonlyArray<JobInsert>): Promise<void> {
  if (jobs.length === 0) return;
  await queueOf(tx, name).insert(name, [...jobs], { db: fromKysely(tx) });
}

/** The job queue of `tx`'s runtime, for enqueueing `name` in `tx`'s open transaction. */
function queueOf(tx: AnyDb, name: string): PgBoss {
  if (!tx.isTransaction) throw new Error(`enqueue of ${name} must run inside a transaction`);
  const boss = queues.get(keyOf(tx));
  if (!boss) throw new Error('job queue is not bound to this database; bootstrap calls prepareJobs()');
  return boss;
}

/** Starts every registered worker; `stop()` stops them (in-flight work finishes first). */
export async function startWorkers(deps: AppDeps, registrations: readonly JobRegistration[]): Promise<{ stop(): Promise<void> }> {
  const started: Array<{ stop(): Promise<void> }> = [];
  try {
    for (const r of registrations) if (r.start) started.push(await r.start(deps));
  } catch (err) {
    await Promise.allSettled(started.map((s) => s.stop()));
    throw err;
  }
  deps.logger.info({ queues: registrations.map((r) => r.queue.name) }, 'workers started');
  return {
    async stop() {
      await Promise.allSettled(started.reverse().map((s) => s.stop()));
    },
  };
}
