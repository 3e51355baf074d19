import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { assertAddressesAllowed, classifyAddress, hostOf, parseTargetUrl, SsrfError } from './ssrf.ts';

/**
 * One webhook POST. Never throws: every outcome, including our own refusals, comes
 * back as a WebhookResponse so the delivery job can log it as an attempt.
 *
 * Verdict: only 2xx is ok. A 3xx is never followed (the Location could point anywhere,
 * including inside our network) and comes back with error.kind 'redirect'. Other
 * non-2xx answers have error null: the status says it all. The verdict is made on the
 * status line; the body is only diagnostic, so a body that stalls, breaks or is too
 * long is cut, not counted against the receiver.
 */

type OutboundErrorKind = 'timeout' | 'connection' | 'ssrf' | 'redirect' | 'tls' | 'other';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Bounds connect + headers + body together. */
  timeoutMs: number;
  /** Response bytes kept for the delivery log; the connection is dropped past this. */
  maxResponseBytes?: number;
  /** Local development and tests only: skips the private-address refusal. */
  allowPrivate: boolean;
}

export interface WebhookResponse {
  ok: boolean;
  status: number | null;
  responseBody: string | null;
  retryAfter: string | null;
  durationMs: number;
  error: null | { kind: OutboundErrorKind; message: string };
}

/**
 * Resolves, refuses if any address is not public, and hands net.connect exactly the
 * addresses it checked: the socket connects to what was validated, so a DNS answer
 * that changes between check and connect (rebinding) has nothing to slip through.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    try {
      assertAddressesAllowed(hostname, addresses as { address: string; family: 4 | 6 }[]);
    } catch (refusal) {
      return callback(refusal as NodeJS.ErrnoException, '', 0);
    }
    if ((options as LookupOptions).all) return callback(null, addresses);
    const [first] = addresses;
    if (!first) return callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), '', 0);
    callback(null, first.address, first.family);
  });
};

// One pooled Agent per setting: keep-alive reuse matters once deliveries fan out.
const dispatchers = new Map<boolean, Agent>();

function dispatcherFor(allowPrivate: boolean): Agent {
  let agent = dispatchers.get(allowPrivate);
  if (!agent) {
    agent = new Agent({ connect: allowPrivate ? {} : { lookup: guardedLookup } });
    dispatchers.set(allowPrivate, agent);
  }
  return agent;
}

/** For graceful shutdown (and test teardown): closes pooled connections. */
export async function closeOutboundDispatchers(): Promise<void> {
  const agents = [...dispatchers.values()];
  dispatchers.clear();
  await Promise.all(agents.map((a) => a.close()));
}

export async function postWebhook(req: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const maxBytes = req.maxResponseBytes ?? 4096;
  const result = (partial: Omit<WebhookResponse, 'durationMs'>): WebhookResponse => ({
    ...partial,
    durationMs: Math.round(performance.now() - started),
  });
  const failed = (kind: OutboundErrorKind, message: string) =>
    result({ ok: false, status: null, responseBody: null, retryAfter: null, error: { kind, message } });

  let url: URL;
  try {
    url = parseTargetUrl(req.url);
    // net.connect skips the lookup hook for IP literals, so they are judged here.
    const host = hostOf(url);
    if (!req.allowPrivate && isIP(host) !== 0) {
      const verdict = classifyAddress(host);
      if (!verdict.allowed) throw new SsrfError(verdict.reason, `${host} is not a public address (${verdict.reason}).`);
    }
  } catch (err) {
    return failed('ssrf', (err as Error).message);
  }

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete response within ${req.timeoutMs} ms`)), req.timeoutMs);
  try {
    const res = await dispatcherFor(req.allowPrivate).request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
    const status = res.statusCode;
    const responseBody = await readCapped(res.body, maxBytes);
    const ok = status >= 200 && status < 300;
    const redirect = status >= 300 && status < 400;
    return result({
      ok,
      status,
      responseBody,
      retryAfter: firstHeader(res.headers['retry-after']),
      error: redirect
        ? { kind: 'redirect', message: `answered ${status} (redirects are not followed); location: ${(firstHeader(res.headers.location) ?? 'none').slice(0, 200)}` }
        : null,
    });
  } catch (err) {
    const { kind, message } = describeError(err, controller.signal.aborted);
    return failed(kind, controller.signal.aborted ? `no response within ${req.timeoutMs} ms` : message);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Keeps the first maxBytes and then destroys the stream, which makes undici drop the
 * connection: a receiver streaming gigabytes costs one buffer, not the whole transfer.
 */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    if (maxBytes > 0) {
      for await (const chunk of body) {
        const take = Math.min(chunk.length, maxBytes - size);
        chunks.push(chunk.subarray(0, take));
        size += take;
        if (size >= maxBytes) break;
      }
    }
  } catch {
    // Stalled (aborted by the timer) or broken mid-body: keep what arrived.
  } finally {
    body.destroy();
  }
  // A cut may split a UTF-8 sequence; the decoder substitutes U+FFFD rather than failing.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function firstHeader(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN',
  'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED',
]);
// OpenSSL verification codes as Node surfaces them (e.g. CERT_HAS_EXPIRED).
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO$)/;

function describeError(err: unknown, timedOut: boolean): { kind: OutboundErrorKind; message: string } {
  if (timedOut) return { kind: 'timeout', message: 'aborted by the attempt timeout' };
  // undici wraps some causes; look through the chain for the informative one.
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (e instanceof SsrfError || code === 'ERR_SSRF_REFUSED') return { kind: 'ssrf', message: e.message };
    if (TIMEOUT_CODES.has(code)) return { kind: 'timeout', message: e.message };
    if (TLS_CODE.test(code)) return { kind: 'tls', message: e.message };
    if (CONNECTION_CODES.has(code)) return { kind: 'connection', message: e.message };
  }
  return { kind: 'other', message: err instanceof Error ? err.message : String(err) };
}
