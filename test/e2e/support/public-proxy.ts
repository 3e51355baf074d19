import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestContext } from '../../support/harness.ts';

/**
 * A reverse proxy standing where `PUBLIC_BASE_URL` points. The test harness
 * listens on a port it picks after the configuration is loaded, so the public
 * URL the service hands out (checkout and sandbox links, the sandbox's callback
 * target) points here, and this forwards to the real server once it is up; as
 * in production, the browser and the sandbox gateway reach the service through
 * its public address. It can also refuse requests to one path, to show that the
 * sandbox retries a callback that was not accepted.
 */
export interface PublicProxy {
  url: string;
  /** Answer the next `n` requests whose path starts with `prefix` with `status`, without forwarding them. */
  refuseNext(prefix: string, n: number, status?: number): void;
  /** Paths of every request seen, in order. */
  seen: Array<{ method: string; path: string; status: number }>;
  close(): Promise<void>;
}

async function startPublicProxy(): Promise<PublicProxy & { setTarget(url: string): void }> {
  let target: URL | null = null;
  const refusals: Array<{ prefix: string; left: number; status: number }> = [];
  const seen: PublicProxy['seen'] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const refusal = refusals.find((r) => r.left > 0 && path.startsWith(r.prefix));
    if (refusal || !target) {
      if (refusal) refusal.left--;
      const status = refusal?.status ?? 502;
      seen.push({ method: req.method ?? 'GET', path, status });
      req.resume();
      res.writeHead(status, { 'content-type': 'text/plain' }).end('refused by the test proxy');
      return;
    }
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path, headers: { ...req.headers, host: target.host } },
      (up) => {
        seen.push({ method: req.method ?? 'GET', path, status: up.statusCode ?? 0 });
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    setTarget(u) {
      target = new URL(u);
    },
    refuseNext(prefix, n, status = 503) {
      refusals.push({ prefix, left: n, status });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A test server whose public base URL is a proxy in front of it (see above). */
export async function startPublicTestServer(env: Record<string, string> = {}): Promise<{ t: TestContext; proxy: PublicProxy; publicUrl: string }> {
  const proxy = await startPublicProxy();
  const t = await startTestServer({ PUBLIC_BASE_URL: proxy.url, ...env });
  proxy.setTarget(t.baseUrl);
  const close = t.close.bind(t);
  t.close = async () => {
    await close();
    await proxy.close();
  };
  return { t, proxy, publicUrl: proxy.url };
}
