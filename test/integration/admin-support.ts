import { spawn } from 'node:child_process';
import { PaycollectAdmin } from '../../clients/admin/index.ts';
import { compileCacheEnv, type TestContext } from '../support/harness.ts';

/** Helpers of the admin API tests (test/integration/admin*.test.ts). */

export const ADMIN_API = '/api/admin/v1';

export function adminToken(t: TestContext): string {
  return t.runtime.deps.secrets.adminToken;
}

/** The typed admin client against the test server (no retries: tests assert single calls). */
export function adminClient(t: TestContext, actor?: string): PaycollectAdmin {
  return new PaycollectAdmin({ baseUrl: t.baseUrl, adminToken: adminToken(t), actor, maxRetries: 0 });
}

/** Raw HTTP with the admin token, for status codes and envelopes. */
export function adminRequest(t: TestContext, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return t.request(method, `${ADMIN_API}${path}`, { token: adminToken(t), headers, ...(body === undefined ? {} : { body }) });
}

export interface AuditRow {
  id: string;
  actor: string;
  action: string;
  target_type: string;
  target_id: string | null;
  brand_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
}

/** Audit rows, oldest first, optionally of one action. */
export function auditRows(t: TestContext, action?: string): Promise<AuditRow[]> {
  return action
    ? t.sql<AuditRow>('SELECT * FROM audit_log WHERE action = $1 ORDER BY id', [action])
    : t.sql<AuditRow>('SELECT * FROM audit_log ORDER BY id');
}

export async function auditCount(t: TestContext): Promise<number> {
  return Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM audit_log'))[0]!.n);
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json(): any;
}

/**
 * The real CLI as a child process (asynchronously: the server it talks to runs
 * in this process). The admin token comes from the server's DATA_DIR/secrets.json
 * unless `env` gives one.
 */
export function runCli(t: TestContext, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', './scripts/require-node24.mjs', 'scripts/cli.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), PAYCOLLECT_BASE_URL: t.baseUrl, DATA_DIR: t.config.DATA_DIR, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
    });
  });
}
