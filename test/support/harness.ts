import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { inject } from 'vitest';
import { createApp } from '../../server/app.ts';
import { answerClientErrors } from '../../server/http/client-errors.ts';
import { UNDECLARED_ERROR_LOG } from '../../server/http/errors.ts';
import { bootstrap, type Runtime } from '../../server/bootstrap.ts';
import { loadConfig, type Config } from '../../server/config.ts';
import { createLogger } from '../../server/infra/logger.ts';
import { createApiKey, createBrand } from '../../server/domain/brands/service.ts';
import { withDatabase } from '../../server/infra/database/local-server.ts';

export interface TestContext {
  baseUrl: string;
  runtime: Runtime;
  config: Config;
  /** Everything the server logged, one JSON line each (for leak scans). */
  logs: string[];
  /** Plain SQL on this file's database (assertions on stored rows). */
  sql<T = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  /** A new brand with a fresh API key (live unless `mode` says `test`: the sandbox takes only test payments). */
  createBrand(name?: string, opts?: { mode?: 'live' | 'test' }): Promise<{ brandId: number; apiKey: string }>;
  /** fetch against the app: JSON in, parsed JSON out. */
  request(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string }): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}


/** Creates this file's own database from the migrated template. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('adminUrl');
  const name = `${inject('dbPrefix')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${inject('templateDb')}"`);
      break;
    } catch (err) {
      // Two files cloning the template at the same instant can collide; retry briefly.
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  await admin.end();
  return {
    url: withDatabase(adminUrl, name),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      // A pool whose end() resolved before its last socket closed still has a
      // connection here for a moment; FORCE would answer it "terminating connection
      // due to administrator command", an error event on a client that may have no
      // listener left (an uncaught exception in the test run). Let them go first.
      for (let wait = 0; wait < 20; wait++) {
        const { rows } = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

/** Quotas large enough that no functional test meets them. */
export const testRateLimits: Record<string, string> = {
  RATE_LIMIT_API_KEY: '100000/60',
  RATE_LIMIT_DEVICE: '100000/60',
  RATE_LIMIT_PAIRING: '100000/60',
  RATE_LIMIT_PAIRING_GLOBAL: '100000/60',
  RATE_LIMIT_TOKEN_REFRESH: '100000/60',
  RATE_LIMIT_CHECKOUT: '100000/60',
  RATE_LIMIT_LOGIN: '100000/60',
};

/**
 * A real server on a real port over this file's own database, with the real
 * job queue. Tests talk to it over HTTP like any client.
 */
export async function startTestServer(
  env: Record<string, string> = {},
  opts: { database?: { url: string; drop(): Promise<void> } } = {},
): Promise<TestContext> {
  // A database of the test's own (a cluster it started) instead of a clone of the template.
  const db = opts.database ?? (await createTestDatabase());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pc-test-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PORT: '0',
    DATABASE_POOL_MAX: '5',
    SHUTDOWN_TIMEOUT_MS: '2000',
    // Every test talks from 127.0.0.1 and pairs many devices: production quotas would
    // throttle unrelated tests. The rate-limit tests set small quotas of their own.
    ...testRateLimits,
    ...env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger({ level: config.LOG_LEVEL, destination: sink });
  const runtime = await bootstrap(config, logger);
  const app = createApp(runtime.deps);
  const server: Server = await new Promise((resolve) => {
    const srv = app.listen(0, '127.0.0.1', () => resolve(srv));
  });
  answerClientErrors(server, logger);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });

  const ctx: TestContext = {
    baseUrl,
    runtime,
    config,
    logs,
    async sql(text, values) {
      return (await pool.query(text, values as unknown[])).rows;
    },
    async createBrand(name = 'Test Brand', opts = {}) {
      const em = runtime.deps.db;
      const brand = await createBrand(em, { name });
      const { key } = await createApiKey(em, brand.id, { name: 'test key', mode: opts.mode ?? 'live' });
      return { brandId: brand.id, apiKey: key };
    },
    async request(method, p, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(baseUrl + p, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async close() {
      // An error answer the route's contract does not declare is logged by the error
      // handler (server/http/errors.ts): any test that provoked one fails here.
      const undeclared = logs.filter((l) => l.includes(UNDECLARED_ERROR_LOG));
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await pool.end();
      await runtime.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
      if (undeclared.length) throw new Error(`error answers not declared by their routes:\n${undeclared.join('\n')}`);
    },
  };
  return ctx;
}

/**
 * For child processes started with an environment of their own: keeps Node's
 * compile cache (vitest.config.ts sets it for the run), so every CLI or server
 * child does not parse and strip the same TypeScript again.
 */
export function compileCacheEnv(): Record<string, string> {
  return process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {};
}
