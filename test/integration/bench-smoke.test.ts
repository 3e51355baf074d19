import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Keeps bench/ from rotting: runs benchmarks end to end in --quick mode
 * (its own PostgreSQL, seeding, both servers, the load generator) and checks
 * the report it writes. No timing is asserted: figures from a smoke run on a
 * shared machine mean nothing.
 */
const root = path.resolve(import.meta.dirname, '../..');
const out = mkdtempSync(path.join(os.tmpdir(), 'pc-bench-smoke-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function runBench(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const { DATABASE_URL: _d, TEST_DATABASE_URL: _t, ...env } = process.env;
    const child = spawn(process.execPath, ['--import', './scripts/require-node24.mjs', 'bench/run.ts', ...args], { cwd: root, env: { ...env, ...extraEnv } });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('bench/run.ts --quick', () => {
  it('runs merchant-reads end to end and writes its JSON report with both sides measured', async () => {
    const { code, output } = await runBench(['--only', 'merchant-reads', '--quick', '--duration', '1', '--warmup', '0', '--out', out]);
    expect(code, output).toBe(0);
    const files = readdirSync(out).filter((f) => /^merchant-reads-.+\.json$/.test(f));
    expect(files).toHaveLength(1);
    const report = JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8'));

    expect(report.name).toBe('merchant-reads');
    expect(report.quick).toBe(true);
    expect(report.machine.nproc).toBeGreaterThan(0);
    expect(report.machine.node).toMatch(/^v24\./);
    expect(report.postgres).toMatch(/^\d+\.\d+/);
    expect(report.settings).toMatchObject({ connections: 64, durationSeconds: 1, brands: 10, payments: 2000, customers: 2000, pacedRate: 300 });
    expect(report.rows.map((r: { metric: string }) => r.metric)).toEqual([
      'GET /payments/{id} throughput (req/s)',
      'GET /payments/{id} p50 (ms)',
      'GET /payments/{id} p99 (ms)',
      'GET /payments/{id} failed requests',
      'GET /payments/{id} server RSS max (MB)',
      'GET /customers/{identifier} throughput (req/s)',
      'GET /customers/{identifier} p50 (ms)',
      'GET /customers/{identifier} p99 (ms)',
      'GET /customers/{identifier} failed requests',
      'GET /customers/{identifier} server RSS max (MB)',
      'GET /payments/{id} at 300/s throughput (req/s)',
      'GET /payments/{id} at 300/s p50 (ms)',
      'GET /payments/{id} at 300/s p99 (ms)',
      'GET /payments/{id} at 300/s failed requests',
      'GET /customers/{identifier} at 300/s throughput (req/s)',
      'GET /customers/{identifier} at 300/s p50 (ms)',
      'GET /customers/{identifier} at 300/s p99 (ms)',
      'GET /customers/{identifier} at 300/s failed requests',
    ]);
    for (const row of report.rows) {
      expect(typeof row.ours, row.metric).toBe('number');
      expect(typeof row.baseline, row.metric).toBe('number');
    }
    // Every answer either server gave under load was the expected 200.
    for (const side of ['ours', 'baseline'] as const) {
      for (const scenario of ['payments', 'customers', 'paymentsPaced', 'customersPaced'] as const) {
        const figures = report.details[scenario][side];
        expect(figures.failures, `${scenario} ${side}`).toBe(0);
        expect(figures.rssMaxMb, `${scenario} ${side}`).toBeGreaterThan(10);
        expect(Object.keys(figures.rounds[0].statuses).filter((s) => s !== '200'), `${scenario} ${side}`).toEqual([]);
      }
    }
    expect(output).toContain('| metric');
  }, 300_000);

  it('runs e2e (SMS -> signed webhook) end to end: every SMS completes one payment and its webhook arrives verified', async () => {
    const { code, output } = await runBench(['--only', 'e2e', '--quick', '--duration', '1', '--warmup', '0', '--out', out]);
    expect(code, output).toBe(0);
    const files = readdirSync(out).filter((f) => /^e2e-.+\.json$/.test(f));
    expect(files).toHaveLength(1);
    const report = JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8'));
    expect(report).toMatchObject({ name: 'e2e', quick: true, settings: { rate: 50, sms: 50, smsPerRequest: 1 } });
    const row = (metric: string) => report.rows.find((r: { metric: string }) => r.metric.startsWith(metric));
    // Correctness, not timing: each SMS matched and completed exactly one payment, each webhook arrived once with a good signature.
    expect(row('SMS matched, each completing one payment')).toMatchObject({ ours: '50/50', met: true });
    expect(row('webhooks arrived / bad signatures / duplicates')).toMatchObject({ ours: '50/0/0', met: true });
    expect(report.details.completion).toEqual({ completed: 50, events: 50, distinct_intents: 50 });
    expect(report.details.latencyMs).toHaveLength(50);
    for (const metric of ['SMS -> webhook at receiver p50', 'SMS -> webhook at receiver p99']) expect(typeof row(metric).ours, metric).toBe('number');
  }, 300_000);
  it('runs pull-on-submit end to end: every missed SMS is pulled from the simulated phone and completes its payment', async () => {
    const { code, output } = await runBench(['--only', 'pull-on-submit', '--quick', '--out', out]);
    expect(code, output).toBe(0);
    const files = readdirSync(out).filter((f) => /^pull-on-submit-.+\.json$/.test(f));
    expect(files).toHaveLength(1);
    const report = JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8'));
    expect(report).toMatchObject({ name: 'pull-on-submit', quick: true, settings: { payments: 5, warmup: 1 } });
    const row = (metric: string) => report.rows.find((r: { metric: string }) => r.metric.startsWith(metric));
    // Correctness, not timing: each submission said "checking", each payment completed by the re-sent SMS, the stream told each one.
    expect(row('submissions answered "checking with the phone"')).toMatchObject({ ours: '5/5', met: true });
    expect(row('completed by the re-sent SMS, no operator')).toMatchObject({ ours: '5/5', met: true });
    expect(report.details.latencyMs).toHaveLength(5);
    expect(report.details.loopErrors).toEqual([]);
    for (const metric of ['submit -> checkout says completed p50', 'submit -> checkout says completed p99']) expect(typeof row(metric).ours, metric).toBe('number');
  }, 300_000);

  it('runs sizing end to end: each load against one and two api processes beside a worker, every request answered', async () => {
    const { code, output } = await runBench(['--only', 'sizing', '--quick', '--duration', '2', '--warmup', '0', '--out', out], { BENCH_SIZING_PROCESSES: '1,2' });
    expect(code, output).toBe(0);
    const files = readdirSync(out).filter((f) => /^sizing-.+\.json$/.test(f));
    expect(files).toHaveLength(1);
    const report = JSON.parse(readFileSync(path.join(out, files[0]!), 'utf8'));
    expect(report).toMatchObject({ name: 'sizing', quick: true, settings: { processCounts: [1, 2], workers: 1 } });
    for (const scenario of ['reads', 'create', 'sms']) {
      expect(report.details[scenario].map((f: { processes: number }) => f.processes)).toEqual([1, 2]);
      for (const f of report.details[scenario]) {
        expect(f.rps, scenario).toBeGreaterThan(0);
        expect(f.failures, scenario).toBe(0);
        // The API processes did the work, and PostgreSQL answered them.
        expect(f.cpu.api, scenario).toBeGreaterThan(0);
        expect(f.cpu.postgres, scenario).toBeGreaterThan(0);
      }
    }
  }, 300_000);
});
