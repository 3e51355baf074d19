import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent } from '../../clients/merchant/index.ts';
import { createApiKey } from '../../server/domain/brands/service.ts';
import { recordEvent, type WebhookEventName } from '../../server/domain/webhooks/outbox.ts';
import { compileCacheEnv, startTestServer, type TestContext } from '../support/harness.ts';
import { startReceiver, verifyingResponder, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { samplePayment } from '../support/webhook-worker.ts';
import { runCli } from './admin-support.ts';
import { transaction } from '../../server/domain/db.ts';

/**
 * `npm run cli -- listen`: the CLI, as a child process with a brand's key, reads
 * the brand's events from the in-process server and forwards each, signed with
 * the secret it printed, to a local receiver that verifies with the merchant SDK.
 */

let t: TestContext;
let receiver: WebhookReceiver;
let brandId: number;
let liveKey: string;
let testKey: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  receiver = await startReceiver();
  ({ brandId, apiKey: liveKey } = await t.createBrand('Listener'));
  testKey = (await createApiKey(t.runtime.deps.db, brandId, { name: 'test', mode: 'test' })).key;
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await receiver?.close();
  await t?.close();
});

let n = 500;
async function emit(mode: 'live' | 'test', event: WebhookEventName = 'payment.completed'): Promise<string> {
  n += 1;
  const { eventId } = await transaction(t.runtime.deps.db, (tx) =>
    recordEvent(tx, { brandId, mode, event, data: { ...samplePayment(n), status: event.split('.')[1]! }, transactionId: null }),
  );
  return (await t.sql<{ public_id: string }>('SELECT public_id FROM webhook_events WHERE id = $1', [eventId]))[0]!.public_id;
}

function startListen(args: string[]) {
  const child = spawn(process.execPath, ['--import', './scripts/require-node24.mjs', 'scripts/cli.ts', 'listen', ...args], {
    env: { PATH: process.env.PATH ?? '', ...compileCacheEnv(), PAYCOLLECT_BASE_URL: t.baseUrl },
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, out, exited };
}

async function ready(l: ReturnType<typeof startListen>): Promise<string> {
  // The banner is two writes; the child's stdout may arrive in two chunks, so
  // wait for its last line before reading the first.
  const line = await eventually(
    async () => (/Ctrl-C to stop\./.test(l.out.stdout) ? /Ready! Your webhook signing secret is (whsec_\S+)/.exec(l.out.stdout) : null),
    30_000,
    `listen ready (stderr: ${l.out.stderr})`,
  );
  return line[1]!;
}

describe('npm run cli -- listen', () => {
  it('forwards the brand\'s events as they happen, signed with the printed secret, one line each; Ctrl-C stops it', async () => {
    const before = await emit('test');
    const l = startListen(['--key', testKey, '--forward-to', `${receiver.url}/local`]);
    const secret = await ready(l);
    expect(l.out.stdout).toContain(`Forwarding test events to ${receiver.url}/local`);
    receiver.respond = verifyingResponder(() => secret);

    const ids = [await emit('test'), await emit('test', 'payment.failed')];
    const live = await emit('live');
    await receiver.waitFor((reqs) => reqs.filter((r) => r.path === '/hooks/local').length >= 2, 20_000);
    const got = receiver.requests.filter((r) => r.path === '/hooks/local');
    expect(got.map((r) => r.headers['x-webhook-id'])).toEqual(ids);
    for (const req of got) {
      // The merchant SDK's verifier accepts it with the printed secret.
      const event = constructEvent(req.rawBody, req.headers as Record<string, string>, secret);
      expect(event.id).toBe(req.headers['x-webhook-id']);
      expect(req.headers['x-webhook-event']).toBe(event.event);
      expect(req.status).toBe(200);
      const [row] = await t.sql<{ payload: string }>('SELECT payload FROM webhook_events WHERE public_id = $1', [event.id]);
      expect(req.rawBody).toBe(row!.payload);
    }
    // One line per event with the local answer; nothing from before the start, nothing of the other mode.
    await eventually(async () => l.out.stdout.includes(ids[1]!));
    expect(l.out.stdout).toMatch(new RegExp(`--> payment\\.completed \\[${ids[0]}\\]\\s+<-- 200`));
    expect(l.out.stdout).toMatch(new RegExp(`--> payment\\.failed \\[${ids[1]}\\]\\s+<-- 200`));
    expect(l.out.stdout).not.toContain(before);
    expect(l.out.stdout).not.toContain(live);

    // A failing local handler is reported and not retried.
    receiver.respond = () => ({ status: 500, body: 'boom' });
    const failing = await emit('test');
    await eventually(async () => l.out.stdout.includes(failing));
    expect(l.out.stdout).toMatch(new RegExp(`\\[${failing}\\]\\s+<-- 500`));
    // Events are forwarded in order from a cursor that only moves forward: once a later
    // event is through, the failing one can no longer be sent again.
    const later = await emit('test');
    await eventually(async () => l.out.stdout.includes(later));
    expect(receiver.requests.filter((r) => r.headers['x-webhook-id'] === failing)).toHaveLength(1);
    expect(l.out.stdout.indexOf(later)).toBeGreaterThan(l.out.stdout.indexOf(failing));

    l.child.kill('SIGINT');
    expect(await l.exited).toBe(0);
    receiver.respond = () => ({ status: 200, body: 'ok' });
  });

  it('--events forwards only those events; an unreachable target is reported', async () => {
    // A port nobody listens on any more.
    const closed = await startReceiver();
    await closed.close();
    const l = startListen(['--key', liveKey, '--forward-to', closed.url, '--events', 'payment.failed']);
    await ready(l);
    const skipped = await emit('live', 'payment.completed');
    const wanted = await emit('live', 'payment.failed');
    await eventually(async () => l.out.stdout.includes(wanted));
    expect(l.out.stdout).toMatch(new RegExp(`\\[${wanted}\\]\\s+<-- error: ECONNREFUSED`));
    expect(l.out.stdout).not.toContain(skipped);
    l.child.kill('SIGTERM');
    expect(await l.exited).toBe(0);
  });

  it('usage mistakes exit 64 with the help; a bad key exits 1 with the API error', async () => {
    const noTarget = await runCli(t, ['listen', '--key', liveKey]);
    expect(noTarget.code).toBe(64);
    expect(noTarget.stderr).toContain('--forward-to is required');
    const badEvent = await runCli(t, ['listen', '--key', liveKey, '--forward-to', 'http://localhost:4242/hooks', '--events', 'payment.done']);
    expect(badEvent.code).toBe(64);
    expect(badEvent.stderr).toContain('unknown event payment.done');
    const badUrl = await runCli(t, ['listen', '--key', liveKey, '--forward-to', 'localhost:4242']);
    expect(badUrl.code).toBe(64);
    const badKey = await runCli(t, ['listen', '--key', 'sk_test_0000000000000000000000000000000000000000', '--forward-to', 'http://localhost:4242/hooks']);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('UNAUTHORIZED');
    const help = await runCli(t, ['listen', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--forward-to <url>');
    expect((await runCli(t, ['--help'])).stdout).toContain('listen');
  });
});
