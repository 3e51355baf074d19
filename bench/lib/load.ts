import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startChild, sampleRss, type BenchChild, type RssSample } from './processes.ts';

/** What the load generator sends: items are `[token index, path, JSON body or null]`. */
export interface LoadTargets {
  method: 'GET' | 'POST';
  tokens: string[];
  items: Array<[number, string, string | null]>;
  /** `random`: any item each time (reads); `sequence`: each item once, in order (writes that must not repeat). */
  order: 'random' | 'sequence';
  /** A fresh Idempotency-Key on every request. */
  idempotencyKey: boolean;
}

export interface LoadPlan {
  url: string;
  /** Several servers behind one address in production: the closed loop spreads its connections over these instead (autocannon's list of URLs). */
  urls?: string[];
  connections: number;
  durationSeconds: number;
  targetsFile: string;
  /** Requests per second, sent at a steady pace (open loop) over at most `connections`; unset: closed loop, as fast as answers come. */
  rate?: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
  /** Response count per HTTP status. */
  statuses: Record<string, number>;
  durationSeconds: number;
  /** A `sequence` target list ran out and started over (its writes repeat from then on). */
  wrapped: boolean;
  /** Paced runs: when the run started (epoch ms), and the slowest 1 % of requests as [sent, ms after the start; latency ms]. */
  startedAt?: number;
  slowest?: Array<[number, number]>;
}

export interface MeasuredLoad extends LoadResult {
  rss: RssSample;
}

export function writeTargets(dir: string, name: string, targets: LoadTargets): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(targets));
  return file;
}

export interface LoadGenerator {
  /** The generator's own process (its CPU competes with the servers' on a small machine). */
  pid: number;
  run(plan: LoadPlan, serverPid: number): Promise<MeasuredLoad>;
  stop(): Promise<void>;
}

/** One load-generator process for a benchmark; each run() is one autocannon run against one server. */
export async function startLoadGenerator(): Promise<LoadGenerator> {
  const child: BenchChild = startChild('load generator', 'bench/lib/load-worker.ts');
  await child.message('ready', 60_000);
  return {
    pid: child.pid,
    async run(plan, serverPid) {
      const rss = sampleRss(serverPid);
      child.send({ type: 'run', plan });
      try {
        const outcome = await child.message<{ result?: LoadResult; message?: string }>(['result', 'failed'], (plan.durationSeconds + 120) * 1000);
        if (outcome.type === 'failed') throw new Error(`load generator failed: ${outcome.message}`);
        return { ...outcome.result!, rss: rss.stop() };
      } finally {
        rss.stop();
      }
    },
    stop: () => child.stop(),
  };
}
