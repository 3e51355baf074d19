import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '../../server/app.ts';
import { bootstrap, type Runtime } from '../../server/bootstrap.ts';
import { createLogger } from '../../server/infra/logger.ts';
import type { TestContext } from './harness.ts';

export interface Instance {
  baseUrl: string;
  runtime: Runtime;
  close(): Promise<void>;
}

/**
 * Another server instance over the test server's database, with its own
 * connection pool and no job workers: what a second process behind a load
 * balancer shares with the first is PostgreSQL only.
 */
export async function startSecondInstance(t: TestContext): Promise<Instance> {
  const runtime = await bootstrap(t.config, createLogger({ level: 'silent' }), { startJobs: false });
  const server: Server = await new Promise((resolve) => {
    const srv = createApp(runtime.deps).listen(0, '127.0.0.1', () => resolve(srv));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runtime,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await runtime.close();
    },
  };
}

/** JSON request against any instance, answered like TestContext.request. */
export async function requestAt(
  baseUrl: string,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(baseUrl + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
