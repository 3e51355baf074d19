import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir, repoRoot, startChild, type BenchChild } from './processes.ts';
import type { BenchSecrets } from './secrets.ts';

export interface RunningServer {
  name: 'ours' | 'baseline';
  url: string;
  child: BenchChild;
}

/** Options every benchmark takes from bench/run.ts. */
export interface BenchOptions {
  quick: boolean;
  /** Start our server under `--cpu-prof`; profiles land in bench/tmp/profiles/. */
  profile: boolean;
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Count statements per request with pg_stat_statements (diagnostics; adds a small cost per statement to both sides). */
  statements?: boolean;
  /** Override the seeded world (default 100k rows over 100 brands; --quick 2,000 over 10). */
  rows?: number;
  brands?: number;
}

/**
 * Quotas far above anything a benchmark sends: the limiter still counts every
 * request (its cost is part of ours), it just never refuses one.
 */
export const unreachableRateLimits = {
  RATE_LIMIT_API_KEY: '100000000/60',
  RATE_LIMIT_DEVICE: '100000000/60',
};

/** Both servers hand out the same checkout links. */
const PUBLIC_BASE_URL = 'https://pay.example';

export function profileDir(): string {
  // bench/tmp/ is git-ignored: profiles are large and belong to one machine and moment.
  const dir = path.join(benchDir, 'tmp', 'profiles');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * The Node options `npm start` gives the service (package.json's start script),
 * less the `--import` preload: our server runs with the same heap settings as
 * in production, whatever they are when the benchmark runs.
 */
export function startScriptNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const words = (pkg.scripts?.start ?? '').split(/\s+/).filter(Boolean);
  // `exec node …`: the shell npm runs the script in is replaced by Node (signals reach it).
  if (words[0] === 'exec') words.shift();
  const flags: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith('--')) break;
    if (w === '--import' || w === '-r' || w === '--require') i++;
    else if (!w.startsWith('--import=')) flags.push(w);
  }
  return flags;
}

export async function startOurs(databaseUrl: string, secrets: BenchSecrets, opts: { profile?: boolean; env?: Record<string, string>; label?: string } = {}): Promise<RunningServer> {
  const child = startChild('ours', 'bench/servers/ours.ts', {
    env: {
      ...secrets.env,
      ...unreachableRateLimits,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_MAX: '10',
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'pc-bench-data-')),
      LOG_LEVEL: 'info',
      PORT: '0',
      PUBLIC_BASE_URL,
      ...opts.env,
      // Experiments: extra settings for our server only, e.g. BENCH_OURS_ENV='{"RATE_LIMIT_ENABLED":"false"}'.
      ...(process.env.BENCH_OURS_ENV ? (JSON.parse(process.env.BENCH_OURS_ENV) as Record<string, string>) : {}),
    },
    execArgv: [
      // BENCH_NO_START_FLAGS=1: without npm start's Node options (to measure what they change).
      ...(process.env.BENCH_NO_START_FLAGS === '1' ? [] : startScriptNodeOptions()),
      // Experiments: Node/V8 flags NODE_OPTIONS does not accept, e.g. BENCH_OURS_NODE_FLAGS='--heap-growing-percent=50'.
      ...(process.env.BENCH_OURS_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
      ...(opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir()}`, `--cpu-prof-name=${opts.label ?? 'ours'}-${Date.now()}.cpuprofile`] : []),
    ],
  });
  const { port } = await child.message<{ port: number }>('ready', 120_000);
  return { name: 'ours', url: `http://127.0.0.1:${port}`, child };
}

export async function startBaseline(databaseUrl: string, secrets: BenchSecrets, env: Record<string, string> = {}): Promise<RunningServer> {
  const child = startChild('baseline', 'bench/servers/baseline.ts', {
    env: { ...secrets.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl, DATABASE_POOL_MAX: '10', PUBLIC_BASE_URL, ...env },
  });
  const { port } = await child.message<{ port: number }>('ready', 60_000);
  return { name: 'baseline', url: `http://127.0.0.1:${port}`, child };
}
