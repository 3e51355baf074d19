import { parseArgs } from 'node:util';
import type { Benchmark } from './lib/benchmark.ts';
import { formatTable, writeReport } from './lib/report.ts';
import type { BenchOptions } from './lib/servers.ts';
import { e2e } from './e2e.ts';
import { intents } from './intents.ts';
import { merchantReads } from './merchant-reads.ts';
import { pullOnSubmit } from './pull-on-submit.ts';
import { sizing } from './sizing.ts';
import { sms } from './sms.ts';
import { startup } from './startup.ts';
import { webhooks } from './webhooks.ts';

/**
 * `npm run bench` runs every benchmark; `--only <name>[,<name>]` picks some;
 * `--quick` is a smoke run (small data, one short round) that proves the
 * scripts work, not a measurement. Each benchmark starts its own PostgreSQL,
 * seeds it, prints its table and writes bench/results/<name>-<date>.json.
 */
const benchmarks: Benchmark[] = [merchantReads, intents, webhooks, startup, sms, e2e, pullOnSubmit, sizing];

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    statements: { type: 'boolean', default: false },
    connections: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rows: { type: 'string' },
    brands: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log('Usage: npm run bench -- [--only <name>[,<name>]] [--quick] [--profile] [--statements] [--connections n] [--duration s] [--warmup s] [--rows n] [--brands n] [--out dir]\n');
  for (const b of benchmarks) console.log(`  ${b.name.padEnd(16)} ${b.description}`);
  process.exit(0);
}

const names = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
const unknown = names?.filter((n) => !benchmarks.some((b) => b.name === n)) ?? [];
if (unknown.length) {
  console.error(`Unknown benchmark ${unknown.join(', ')}; one of: ${benchmarks.map((b) => b.name).join(', ')}`);
  process.exit(2);
}

const positive = (v: string | undefined, fallback: number, what: string) => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) {
    console.error(`--${what} must be a non-negative number`);
    process.exit(2);
  }
  return n;
};

const opts: BenchOptions = {
  quick: values.quick,
  profile: values.profile,
  statements: values.statements,
  connections: positive(values.connections, 64, 'connections'),
  durationSeconds: positive(values.duration, values.quick ? 2 : 15, 'duration'),
  warmupSeconds: positive(values.warmup, values.quick ? 1 : 5, 'warmup'),
  ...(values.rows ? { rows: Math.max(1, Math.floor(positive(values.rows, 0, 'rows'))) } : {}),
  ...(values.brands ? { brands: Math.max(2, Math.floor(positive(values.brands, 0, 'brands'))) } : {}),
};

let failed = false;
for (const b of benchmarks.filter((x) => !names || names.includes(x.name))) {
  console.log(`\n== ${b.name}: ${b.description}`);
  try {
    const report = await b.run(opts);
    console.log(formatTable(report));
    console.log(`-> ${writeReport(report, values.out)}`);
  } catch (err) {
    failed = true;
    console.error(`${b.name} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  }
}
process.exit(failed ? 1 : 0);
