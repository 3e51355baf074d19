import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runAsIds } from '../../server/infra/database/embedded.ts';
import { freePort } from '../../server/infra/database/local-server.ts';

/**
 * A real PgBouncer in transaction pooling mode in front of the test
 * PostgreSQL. The binary is PGBOUNCER_PATH, `pgbouncer` on the PATH or
 * Debian's /usr/sbin/pgbouncer; when none is there, scripts/install-pgbouncer.sh
 * installs Debian's package (as root, or with password-less sudo). Settings:
 * https://www.pgbouncer.org/config.html
 */
export interface Bouncer {
  /** `database` on the upstream server, through PgBouncer. */
  url(database: string): string;
  version: [number, number];
  /** 1.21 and later keep protocol-level prepared statements per client (max_prepared_statements). */
  preparedStatements: boolean;
  /** Transactions and queries PgBouncer has passed on to `database` (its admin console's SHOW STATS). */
  stats(database: string): Promise<{ transactions: number; queries: number }>;
  close(): Promise<void>;
}

function findBinary(): string | null {
  const candidates = [process.env.PGBOUNCER_PATH, ...(process.env.PATH ?? '').split(':').map((d) => path.join(d, 'pgbouncer')), '/usr/sbin/pgbouncer'];
  return candidates.find((c): c is string => !!c && existsSync(c)) ?? null;
}

/** The binary, installing it when possible; else why not (the test is then skipped with it). */
export function pgbouncerBinary(): { path: string } | { missing: string } {
  const found = findBinary();
  if (found) return { path: found };
  const script = fileURLToPath(new URL('../../scripts/install-pgbouncer.sh', import.meta.url));
  const run = spawnSync('sh', [script], { encoding: 'utf8', timeout: 300_000 });
  const installed = findBinary();
  if (installed) return { path: installed };
  return { missing: `pgbouncer is not installed and could not be installed (${(run.stderr || run.stdout || String(run.error ?? '')).trim().split('\n').pop()})` };
}

export async function startPgBouncer(binary: string, upstreamUrl: string): Promise<Bouncer> {
  const upstream = new URL(upstreamUrl);
  const versionText = execFileSync(binary, ['--version'], { encoding: 'utf8' });
  const [, major, minor] = /PgBouncer (\d+)\.(\d+)/.exec(versionText) ?? [];
  const version: [number, number] = [Number(major), Number(minor)];
  const preparedStatements = version[0] > 1 || version[1] >= 21;
  const ids = runAsIds();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(upstream.username || 'postgres');
  const password = decodeURIComponent(upstream.password);
  // Clients log in without a password (trust, loopback only); PgBouncer logs in upstream with the test server's credentials.
  writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" ""\n`);
  const ini = [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || '5432'} user=${user}${password ? ` password=${password}` : ''}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    `admin_users = ${user}`,
    'max_client_conn = 500',
    'default_pool_size = 20',
    ...(preparedStatements ? ['max_prepared_statements = 200'] : []),
    `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
  ].join('\n');
  writeFileSync(path.join(dir, 'pgbouncer.ini'), `${ini}\n`, { mode: 0o600 });
  if (ids) {
    chmodSync(dir, 0o700);
    for (const f of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(path.join(dir, f), ids.uid, ids.gid);
  }
  // PgBouncer refuses to run as root; as root it runs as the `postgres` user, like the embedded database.
  const child: ChildProcess = spawn(binary, [path.join(dir, 'pgbouncer.ini')], { ...ids, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const url = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (code ${child.exitCode}): ${output.slice(-2000)}`);
    const c = new pg.Client({ connectionString: url(upstream.pathname.slice(1) || 'postgres') });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (i > 100) throw new Error(`pgbouncer did not answer: ${(err as Error).message}; ${output.slice(-2000)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    version,
    preparedStatements,
    async stats(database) {
      // The admin console speaks only the simple query protocol: a query without parameters.
      const c = new pg.Client({ connectionString: url('pgbouncer') });
      await c.connect();
      try {
        const { rows } = await c.query<{ database: string; total_xact_count: string; total_query_count: string }>('SHOW STATS');
        const row = rows.find((r) => r.database === database);
        return { transactions: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
      } finally {
        await c.end();
      }
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        // SIGINT: PgBouncer's "safe shutdown" waits for transactions in flight; SIGTERM closes at once.
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
