import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir } from './processes.ts';
import { startScriptNodeOptions } from './servers.ts';

export interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGb: number;
  node: string;
  platform: string;
  /** 1, 5 and 15 minute load averages when the benchmark started: others may share this machine. */
  loadAverageAtStart: number[];
  /** Node options our server ran with (those of `npm start`, plus BENCH_OURS_NODE_FLAGS and BENCH_OURS_ENV's NODE_OPTIONS if set). */
  ourNodeOptions: string[];
}

export function machine(): Machine {
  return {
    nproc: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    ourNodeOptions: [
      ...(process.env.BENCH_NO_START_FLAGS === '1' ? [] : startScriptNodeOptions()),
      ...(process.env.BENCH_OURS_NODE_FLAGS?.split(/\s+/) ?? []),
      ...(process.env.BENCH_OURS_ENV ? [(JSON.parse(process.env.BENCH_OURS_ENV) as Record<string, string>).NODE_OPTIONS ?? ''] : []),
    ].filter(Boolean),
  };
}

/** One row of a benchmark's table: a measured figure, the baseline's beside it, and the target. */
export interface Row {
  metric: string;
  ours: number | string | null;
  baseline?: number | string | null;
  /** ours / baseline, when both are numbers and the comparison means something. */
  ratio?: number | null;
  target?: string;
  met?: boolean | null;
}

export interface BenchReport {
  name: string;
  date: string;
  quick: boolean;
  machine: Machine;
  postgres: string;
  settings: Record<string, unknown>;
  rows: Row[];
  /** Raw figures per side (load results, RSS, counts) for whoever digs deeper. */
  details: Record<string, unknown>;
  loadAverageAtEnd: number[];
}

export function ratio(ours: number | null | undefined, baseline: number | null | undefined): number | null {
  if (ours == null || baseline == null || baseline === 0) return null;
  return Math.round((ours / baseline) * 100) / 100;
}

const fmt = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'number' ? String(Math.round(v * 100) / 100) : String(v));

export function formatTable(report: BenchReport): string {
  const header = ['metric', 'ours', 'baseline', 'ratio', 'target', 'met'];
  const lines = report.rows.map((r) => [r.metric, fmt(r.ours), fmt(r.baseline), fmt(r.ratio), r.target ?? '-', r.met === undefined || r.met === null ? '-' : r.met ? 'yes' : 'NO']);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    `${report.name}${report.quick ? ' (quick)' : ''}: ${report.date}, load average ${report.machine.loadAverageAtStart.join(' ')} -> ${report.loadAverageAtEnd.join(' ')}`,
    row(header),
    row(widths.map((w) => '-'.repeat(w))),
    ...lines.map(row),
  ].join('\n');
}

/** Writes `bench/results/<name>-<date>.json` (or into `dir`) and returns its path. */
export function writeReport(report: BenchReport, dir = path.join(benchDir, 'results')): string {
  mkdirSync(dir, { recursive: true });
  const stamp = report.date.replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
  const file = path.join(dir, `${report.name}-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
