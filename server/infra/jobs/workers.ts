import { fromKysely, type PgBoss, type Queue, type SendOptions } from 'pg-boss';
import type { AppDeps } from '../../deps.ts';
import type { EntityManager, Orm } from '../database/orm.ts';

/**
 * Background work. Each job module exports a registration; the list of them
 * (the registry) lives in server/domain/jobs.ts and is passed in here, so this
 * module knows no domain code:
 * - `queue`: created in every process at start, because any process may enqueue
 *   (an API-only process records events too);
 * - `start(deps)`: runs only where workers run (`WORKERS_ENABLED`) and returns
 *   how to stop what it started (pg-boss workers, periodic sweeps).
 */
export interface JobRegistration {
  queue: Queue;
  start?(deps: AppDeps): Promise<{ stop(): Promise<void> }>;
}

// Keyed by the ORM's configuration, which every fork of one ORM shares: code that
// only holds an EntityManager (recordEvent inside a caller's transaction) finds
// the job queue of its own runtime, and two runtimes in one process (tests) never
// see each other's.
const queues = new WeakMap<object, PgBoss>();

/** Creates every queue and binds the job queue to the ORM. Run in every process, workers or not. */
export async function prepareJobs(deps: Pick<AppDeps, 'orm' | 'boss'>, registrations: readonly JobRegistration[]): Promise<void> {
  for (const { queue } of registrations) {
    const { name, ...options } = queue;
    await deps.boss.createQueue(name, options);
  }
  queues.set(deps.orm.config, deps.boss);
}

export function unbindJobs(orm: Orm): void {
  queues.delete(orm.config);
}

/**
 * Enqueues a job inside the caller's open transaction: the job row commits or
 * rolls back with the caller's change. Uses pg-boss's Kysely adapter on the
 * transaction MikroORM holds, which passes pg-boss's `$n` parameters through to
 * the driver (em.execute would not: it only fills `?` placeholders).
 */
export async function enqueueInTransaction(em: EntityManager, name: string, data: object, options: Omit<SendOptions, 'db'> = {}): Promise<string | null> {
  return queueOf(em, name).send(name, data, { ...options, db: fromKysely(em.getKysely() as never) });
}

/** The job queue of `em`'s runtime, for enqueueing `name` in `em`'s open transaction. */
function queueOf(em: EntityManager, name: string): PgBoss {
  if (!em.isInTransaction()) throw new Error(`enqueue of ${name} must run inside em.transactional()`);
  const boss = queues.get(em.config);
  if (!boss) throw new Error('job queue is not bound to this ORM; bootstrap calls prepareJobs()');
  return boss;
}

/**
 * enqueueInTransaction for several jobs of one queue, in one statement:
 * pg-boss's public `insert` with the same adapter on the caller's transaction.
 * Only the options `send` and `insert` treat alike are taken (`singletonKey`,
 * `startAfter`): a singleton key already queued skips that job, as `send` does.
 */
export async function enqueueManyInTransaction(em: EntityManager, name: string, jobs: ReadonlyArray<{ data: object; singletonKey?: string; startAfter?: Date }>): Promise<void> {
  if (jobs.length === 0) return;
  await queueOf(em, name).insert(name, [...jobs], { db: fromKysely(em.getKysely() as never) });
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
