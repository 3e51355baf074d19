/**
 * `npm run cli -- listen`: like `stripe listen`. Reads the brand's events as they
 * happen from `GET /api/v1/events` (a long-poll with a cursor, with the brand's
 * own API key) and forwards each, signed with a secret made for this session, to
 * a local URL, so a developer sees real webhooks on localhost without exposing
 * it. A dev tool: a failed forward is printed and never retried.
 */
import { parseArgs } from 'node:util';
import { PaycollectError, PaycollectMerchant } from '../../clients/merchant/index.ts';
import { webhookEventNames, type WebhookEventName } from '../../contract/vocabulary.ts';
import { generateWebhookSecret, signatureHeader } from '../../server/domain/webhooks/signature.ts';

export const listenHelp = `Usage: npm run cli -- listen --key <sk_test_…|sk_live_…> --forward-to <url> [--events <a,b>] [--base-url <url>]

Forwards the brand's events, as they happen, to a local URL, signed like real
deliveries (X-Webhook-Signature, X-Webhook-Id, X-Webhook-Event) with a signing
secret made for this session and printed at start: verify with it as with your
endpoint's secret. The key's mode decides which events come (a test key: test
events). One line per event with your URL's answer; nothing is retried. Ctrl-C stops.

Options:
  --key <key>           The brand's API key (default PAYCOLLECT_API_KEY)
  --forward-to <url>    Where to POST each event, e.g. http://localhost:4242/hooks
  --events <a,b>        Only these events (default all): ${webhookEventNames.join(', ')}
  --base-url <url>      The service (default PAYCOLLECT_BASE_URL, else http://127.0.0.1:3000)
  -h, --help            This help`;

/** Per forward; a local handler that hangs longer is reported, not waited for. */
const FORWARD_TIMEOUT_MS = 10_000;
/** The long-poll wait asked of the service (its maximum). */
const WAIT_SECONDS = 25;

interface Io {
  out(text: string): void;
  err(text: string): void;
}

function parse(argv: string[], env: NodeJS.ProcessEnv) {
  const { values } = parseArgs({
    args: argv,
    options: { key: { type: 'string' }, 'forward-to': { type: 'string' }, events: { type: 'string' }, 'base-url': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return { help: true as const };
  const key = values.key ?? env.PAYCOLLECT_API_KEY;
  if (!key) throw new Error('--key (or PAYCOLLECT_API_KEY) is required');
  const forwardTo = values['forward-to'];
  if (!forwardTo) throw new Error('--forward-to is required');
  let target: URL;
  try {
    target = new URL(forwardTo);
  } catch {
    throw new Error('--forward-to must be an absolute http(s) URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error('--forward-to must be an absolute http(s) URL');
  let events: WebhookEventName[] | null = null;
  if (values.events !== undefined) {
    const names = values.events.split(',').map((e) => e.trim()).filter(Boolean);
    const unknown = names.filter((n) => !(webhookEventNames as readonly string[]).includes(n));
    if (names.length === 0 || unknown.length) throw new Error(`--events: unknown event ${unknown.join(', ') || '(none given)'}; known: ${webhookEventNames.join(', ')}`);
    events = [...new Set(names)] as WebhookEventName[];
  }
  const baseUrl = values['base-url'] ?? env.PAYCOLLECT_BASE_URL ?? 'http://127.0.0.1:3000';
  return { help: false as const, key, target: target.toString(), events, baseUrl };
}

/** POSTs one event body exactly as the service would deliver it; answers the status or why it failed. */
async function forward(url: string, secret: string, e: { id: string; event: string; payload: string }): Promise<string> {
  const t = Math.floor(Date.now() / 1000);
  try {
    const res = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'paycollect-cli-listen',
        'x-webhook-signature': signatureHeader([secret], t, e.payload),
        'x-webhook-id': e.id,
        'x-webhook-event': e.event,
        'x-webhook-attempt': '1',
      },
      body: e.payload,
    });
    await res.arrayBuffer().catch(() => undefined);
    return String(res.status);
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return `error: timed out after ${FORWARD_TIMEOUT_MS / 1000} s`;
    // fetch says only "fetch failed"; the cause has the useful part (ECONNREFUSED, bad port...).
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return `error: ${cause?.code ?? cause?.message ?? (err as Error).message}`;
  }
}

/** Runs until `stop` aborts (Ctrl-C); returns the exit code. */
export async function listen(argv: string[], io: Io, env: NodeJS.ProcessEnv, stop: AbortSignal): Promise<number> {
  let opts: ReturnType<typeof parse>;
  try {
    opts = parse(argv, env);
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${listenHelp}`);
    return 64;
  }
  if (opts.help) {
    io.out(listenHelp);
    return 0;
  }
  const merchant = new PaycollectMerchant({ apiKey: opts.key, baseUrl: opts.baseUrl, timeoutMs: (WAIT_SECONDS + 10) * 1000 });
  const secret = generateWebhookSecret();
  const types = opts.events ? opts.events.join(',') : undefined;
  try {
    // Start at "now": only events from here on are forwarded.
    const start = await merchant.events.list({ limit: 1 }, { signal: stop });
    let cursor = start.meta.next_cursor;
    const mode = opts.key.startsWith('sk_test_') ? 'test' : 'live';
    io.out(`Ready! Your webhook signing secret is ${secret} (this session only)`);
    io.out(`Forwarding ${mode} events${opts.events ? ` (${opts.events.join(', ')})` : ''} to ${opts.target}. Ctrl-C to stop.`);
    while (!stop.aborted) {
      let page;
      try {
        page = await merchant.events.list({ after: cursor, wait: WAIT_SECONDS, limit: 100, ...(types ? { types } : {}) }, { signal: stop });
      } catch (err) {
        if (stop.aborted) break;
        if (err instanceof PaycollectError && (err.status === 401 || err.status === 403)) throw err;
        io.err(`could not read events (${(err as Error).message}); trying again in 2 s`);
        await new Promise((r) => setTimeout(r, 2000));
        continue;
      }
      for (const e of page.data) {
        const status = await forward(opts.target, secret, e);
        io.out(`${new Date().toISOString()}  --> ${e.event} [${e.id}]${e.test ? ' (test)' : ''}  <-- ${status}`);
      }
      cursor = page.meta.next_cursor;
    }
    return 0;
  } catch (err) {
    if (stop.aborted) return 0;
    if (err instanceof PaycollectError) {
      io.err(`error ${err.code}${err.status ? ` (HTTP ${err.status})` : ''}: ${err.message}`);
      return 1;
    }
    throw err;
  }
}
