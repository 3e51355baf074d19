import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constructEvent } from '../../clients/shared/webhook-verify.ts';

/**
 * A fast webhook receiver in its own process: answers 200 at once, checks
 * every signature with the merchant SDK's own verifier (a delivery that does
 * not verify is counted, not accepted), and notes when each event id arrived
 * on a wall clock with sub-millisecond resolution, comparable across processes.
 *
 * Secrets arrive over IPC (`{ type: 'secrets', secrets: { <path>: <secret> } }`),
 * keyed by the endpoint path, one endpoint per brand.
 */
let secrets: Record<string, string> = {};
const arrivals = new Map<string, number>();
let received = 0;
let badSignatures = 0;
let duplicates = 0;
let firstAt: number | null = null;
let lastAt: number | null = null;

const now = () => performance.timeOrigin + performance.now();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    const raw = Buffer.concat(chunks).toString('utf8');
    const secret = secrets[req.url ?? ''];
    let id: string | null = null;
    try {
      if (!secret) throw new Error('no endpoint at this path');
      id = (constructEvent(raw, req.headers as Record<string, string>, secret) as { id: string }).id;
    } catch {
      badSignatures++;
    }
    received++;
    firstAt ??= at;
    lastAt = at;
    if (id !== null) {
      if (arrivals.has(id)) duplicates++;
      else arrivals.set(id, at);
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;

process.on('message', (msg: { type: string; secrets?: Record<string, string>; ids?: string[] }) => {
  if (msg.type === 'secrets') {
    secrets = { ...secrets, ...msg.secrets };
    process.send?.({ type: 'secrets-set' });
  } else if (msg.type === 'reset') {
    arrivals.clear();
    received = badSignatures = duplicates = 0;
    firstAt = lastAt = null;
    process.send?.({ type: 'reset-done' });
  } else if (msg.type === 'stats') {
    // Arrival times only for the ids asked about (latency samples); counts for everything.
    const asked = Object.fromEntries((msg.ids ?? []).filter((i) => arrivals.has(i)).map((i) => [i, arrivals.get(i)!]));
    process.send?.({ type: 'stats', received, distinct: arrivals.size, badSignatures, duplicates, firstAt, lastAt, arrivals: asked, arrivalTimes: msg.ids ? [] : [...arrivals.values()] });
  }
});

server.listen(0, '127.0.0.1', () => process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port }));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
