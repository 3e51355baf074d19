import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBenchDatabase, statementStats, type BenchDatabase } from './database.ts';
import { machine, type BenchReport, type Row } from './report.ts';
import { benchSecrets, type BenchSecrets } from './secrets.ts';
import type { BenchOptions } from './servers.ts';

export interface Benchmark {
  name: string;
  /** One line for `--help` and the report. */
  description: string;
  run(opts: BenchOptions): Promise<BenchReport>;
}

/** Seeding sizes: 100k rows over 100 brands (BENCHMARKS.md), a small world for --quick, or what --rows/--brands say. */
export function worldSize(opts: Pick<BenchOptions, 'quick' | 'rows' | 'brands'>): { brands: number; rows: number } {
  const size = opts.quick ? { brands: 10, rows: 2000 } : { brands: 100, rows: 100_000 };
  return { brands: opts.brands ?? size.brands, rows: opts.rows ?? size.rows };
}

export interface BenchScope {
  db: BenchDatabase;
  secrets: BenchSecrets;
  /** Scratch directory for target files; removed at the end. */
  tmp: string;
  /** Statement counts per request (with --statements), for compareUnderLoad. */
  stats?: ReturnType<typeof statementStats>;
  /** Everything to stop at the end, last registered first. */
  defer(fn: () => Promise<unknown>): void;
}

/**
 * Runs `body` with its own database, secrets and scratch directory, always
 * cleaning up (servers, generator, cluster) even when it throws, and wraps its
 * rows into a report with the machine and load figures.
 */
export async function withScope(
  name: string,
  opts: BenchOptions,
  body: (scope: BenchScope) => Promise<{ rows: Row[]; settings?: Record<string, unknown>; details?: Record<string, unknown> }>,
): Promise<BenchReport> {
  const started = machine();
  const date = new Date().toISOString();
  const db = await startBenchDatabase({ statements: opts.statements });
  const tmp = mkdtempSync(path.join(os.tmpdir(), `pc-bench-${name}-`));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const out = await body({ db, secrets: benchSecrets(), tmp, ...(opts.statements ? { stats: statementStats(db.url) } : {}), defer: (fn) => cleanups.push(fn) });
    return {
      name,
      date,
      quick: opts.quick,
      machine: started,
      postgres: db.version,
      settings: { connections: opts.connections, durationSeconds: opts.durationSeconds, warmupSeconds: opts.warmupSeconds, ...out.settings },
      rows: out.rows,
      details: out.details ?? {},
      loadAverageAtEnd: os.loadavg().map((l) => Math.round(l * 100) / 100),
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err) => console.error(`${name}: cleanup failed: ${(err as Error).message}`));
    await db.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}
