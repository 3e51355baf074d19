import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { rateLimitEnvShape } from './domain/rate-limit/policy.ts';
import { retentionEnvShape, retentionProblems } from './domain/retention/policy.ts';

/**
 * Configuration, parsed once from the environment with zod and frozen.
 * Every variable is documented in the README; a bad value fails start-up with a
 * message naming the variable. Secrets that are not given are generated and kept
 * under DATA_DIR (see infra/secrets.ts), so a fresh machine needs no `.env`.
 */
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z
  .string()
  .regex(/^\d+$/, 'must be a port number')
  .transform(Number)
  .pipe(z.number().int().min(0, 'must be between 0 and 65535').max(65535, 'must be between 0 and 65535'));

const nonNegativeInt = (what: string) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number of ${what}`)
    .transform(Number);

const positiveInt = (what: string) => nonNegativeInt(what).pipe(z.number().int().positive(`must be a positive number of ${what}`));

const postgresUrl = z
  .string()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL');

const secret = z.string().min(32, 'must be at least 32 characters');

/** Names Express's `trust proxy` understands besides addresses and subnets. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const validProxyEntry = (entry: string): boolean => {
  if (PROXY_NAMES.has(entry)) return true;
  if (entry.includes('/')) {
    try {
      ipaddr.parseCIDR(entry);
      return true;
    } catch {
      return false;
    }
  }
  return ipaddr.isValid(entry);
};

/**
 * Which peers may set X-Forwarded-For, in Express's `trust proxy` terms:
 * `false`; a hop count (`1` = one proxy in front: the client is the address it
 * appended, whatever the client put to the left of it); or the proxies'
 * addresses/subnets. `true` (trust every hop, so the client is the leftmost
 * address, which the client itself chooses) still parses for old setups; the
 * server warns at start-up (see README, SECURITY.md).
 */
type TrustProxy = boolean | number | string;
const trustProxy = z.string().transform((raw, ctx): TrustProxy => {
  const v = raw.trim().toLowerCase();
  if (['false', 'no', '0'].includes(v)) return false;
  if (['true', 'yes'].includes(v)) return true;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops <= 20) return hops;
  } else {
    const entries = v.split(',').map((e) => e.trim());
    if (entries.every((e) => e !== '' && validProxyEntry(e))) return entries.join(', ');
  }
  ctx.addIssue({
    code: 'custom',
    message: 'must be false, a hop count (1-20), or a comma-separated list of proxy addresses/subnets (CIDR, loopback, linklocal, uniquelocal)',
  });
  return z.NEVER;
});

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(3000),
  PUBLIC_BASE_URL: z.url({ error: 'must be an absolute http(s) URL' }).optional(),
  DATABASE_URL: postgresUrl.optional(),
  DATABASE_POOL_MAX: positiveInt('connections').default(10),
  /** Connections kept open while idle (at most DATABASE_POOL_MAX; unset: all of them); the rest close after 10 s unused. */
  DATABASE_POOL_MIN: nonNegativeInt('connections').optional(),
  DATABASE_NAMED_STATEMENTS: bool.default(true),
  /** A streaming replica for the reads that tolerate lag (lists, overview); unset: every read goes to DATABASE_URL. */
  DATABASE_READ_URL: postgresUrl.optional(),
  /**
   * A direct (session) connection to the primary for what a pooler in transaction mode
   * cannot carry: LISTEN (status streams, job wake-ups), migrations and the job queue.
   * Unset: DATABASE_URL is used for all of it.
   */
  DATABASE_DIRECT_URL: postgresUrl.optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  EMBEDDED_DB_PORT: port.default(54329),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  BODY_LIMIT_BYTES: positiveInt('bytes').default(102_400),
  SHUTDOWN_TIMEOUT_MS: positiveInt('milliseconds').default(10_000),
  /** What this process runs: `all` (HTTP, jobs and sweeps), `api` (HTTP only) or `worker` (jobs and sweeps only); see serviceRole. */
  SERVICE_ROLE: z.enum(['all', 'api', 'worker'], { error: 'must be all, api or worker' }).optional(),
  /** The older switch: `false` is SERVICE_ROLE=api. */
  WORKERS_ENABLED: bool.optional(),
  TRUST_PROXY: trustProxy.default(false),
  WEBHOOK_ALLOW_PRIVATE_URLS: bool.default(false),
  ADMIN_TOKEN: secret.optional(),
  JWT_ACCESS_SECRET: secret.optional(),
  JWT_REFRESH_SECRET: secret.optional(),
  BLIND_INDEX_KEY: z.string().optional(),
  PII_ENCRYPTION_KEYS: z.string().optional(),
  SANDBOX_CALLBACK_SECRET: secret.optional(),
  /** Operator alerts by e-mail: smtp:// or smtps:// URL (user and password in it); unset = no e-mail. */
  SMTP_URL: z.string().refine((v) => /^smtps?:\/\/[^/]/.test(v), 'must be an smtp:// or smtps:// URL').optional(),
  ALERT_EMAIL_FROM: z.email({ error: 'must be an e-mail address' }).default('alerts@localhost'),
  /** Sender address of customers' receipts; the brand's name is its display name. */
  RECEIPT_EMAIL_FROM: z.email({ error: 'must be an e-mail address' }).default('receipts@localhost'),
  /** Comma-separated operator addresses that receive every alert. */
  ALERT_EMAIL_TO: z
    .string()
    .transform((v) => v.split(',').map((a) => a.trim()).filter(Boolean))
    .pipe(z.array(z.email({ error: 'must be comma-separated e-mail addresses' })))
    .optional(),
  /** Console sessions end after this many minutes without a request (sliding). */
  CONSOLE_SESSION_IDLE_MINUTES: positiveInt('minutes').default(30),
  /** ...and at the latest this many hours after login. */
  CONSOLE_SESSION_MAX_HOURS: positiveInt('hours').default(12),
  /** Open checkout status streams (Server-Sent Events) this process serves at most; more are 429. */
  CHECKOUT_STREAMS_MAX: positiveInt('streams').default(2000),
  /** ...and at most this many for one payment (a customer's tabs). */
  CHECKOUT_STREAMS_PER_PAYMENT: positiveInt('streams').default(5),
  /** ...and at most this many from one client address (an IPv6 /64): one client cannot take every place. */
  CHECKOUT_STREAMS_PER_ADDRESS: positiveInt('streams').default(20),
  /** A comment line this often keeps proxies from closing an idle stream. */
  CHECKOUT_STREAM_HEARTBEAT_MS: positiveInt('milliseconds').default(15_000),
  /** E-mail of the console owner created on the first run. */
  CONSOLE_OWNER_EMAIL: z.string().regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address').default('owner@localhost'),
  ...rateLimitEnvShape,
  ...retentionEnvShape,
});

type Env = z.output<typeof envSchema>;

export type ServiceRole = 'all' | 'api' | 'worker';

export interface Config extends Readonly<Omit<Env, 'PUBLIC_BASE_URL' | 'DATABASE_POOL_MIN' | 'SERVICE_ROLE' | 'WORKERS_ENABLED'>> {
  readonly PUBLIC_BASE_URL: string;
  readonly DATABASE_POOL_MIN: number;
  readonly SERVICE_ROLE: ServiceRole;
  /** Whether this process works jobs and runs the schedules: every role but `api`. */
  readonly WORKERS_ENABLED: boolean;
}

/**
 * The process's role, from SERVICE_ROLE, else from the older WORKERS_ENABLED:
 * `false` there is the `api` role (what the test harness and second instances
 * set), `true` or unset is `all`. Both set and disagreeing (`WORKERS_ENABLED=false`
 * with a role that works jobs, or `true` with `api`) is an error, not a guess.
 */
function serviceRole(e: Pick<Env, 'SERVICE_ROLE' | 'WORKERS_ENABLED'>): ServiceRole {
  const fromWorkers: ServiceRole | undefined = e.WORKERS_ENABLED === undefined ? undefined : e.WORKERS_ENABLED ? 'all' : 'api';
  if (e.SERVICE_ROLE === undefined) return fromWorkers ?? 'all';
  if (e.WORKERS_ENABLED !== undefined && e.WORKERS_ENABLED !== (e.SERVICE_ROLE !== 'api')) {
    throw new ConfigError(`Invalid configuration:\n  WORKERS_ENABLED: must agree with SERVICE_ROLE=${e.SERVICE_ROLE} (unset it; SERVICE_ROLE decides)`);
  }
  return e.SERVICE_ROLE;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Parses the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings mean "not set": a `FOO=` line in a shell should not fail validation.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0] ?? '?')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.DATABASE_POOL_MIN !== undefined && e.DATABASE_POOL_MIN > e.DATABASE_POOL_MAX) {
    throw new ConfigError(`Invalid configuration:\n  DATABASE_POOL_MIN: must be at most DATABASE_POOL_MAX (${e.DATABASE_POOL_MAX})`);
  }
  const retention = retentionProblems(e);
  if (retention.length) throw new ConfigError(`Invalid configuration:\n${retention.map((p) => `  ${p}`).join('\n')}`);
  const base = e.PUBLIC_BASE_URL ?? `http://${e.HOST === '0.0.0.0' ? 'localhost' : e.HOST}:${e.PORT}`;
  const role = serviceRole(e);
  return Object.freeze({
    ...e,
    PUBLIC_BASE_URL: base.replace(/\/+$/, ''),
    DATABASE_POOL_MIN: e.DATABASE_POOL_MIN ?? e.DATABASE_POOL_MAX,
    SERVICE_ROLE: role,
    WORKERS_ENABLED: role !== 'api',
  });
}

/** Settings that parse but weaken the service: logged as warnings at start-up. */
export function configWarnings(config: Pick<Config, 'TRUST_PROXY'>): string[] {
  const warnings: string[] = [];
  if (config.TRUST_PROXY === true) {
    // Kept so old deployments start, but every X-Forwarded-For hop is then believed:
    // a client picks its own rate-limit address by sending one.
    warnings.push('TRUST_PROXY=true trusts every X-Forwarded-For hop (clients can choose their address); set the hop count or the proxy addresses instead');
  }
  return warnings;
}
