import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, statSync, mkdirSync, mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadBinaries, runAsIds } from '../../server/infra/database/embedded.ts';
import { freePort } from '../../server/infra/database/local-server.ts';

/**
 * A primary and a streaming hot standby from the embedded PostgreSQL binaries
 * (initdb and postgres only: there is no pg_basebackup among them). The standby
 * is made by PostgreSQL's low-level base backup
 * (https://www.postgresql.org/docs/current/continuous-archiving.html#BACKUP-LOWLEVEL-BASE-BACKUP):
 * pg_backup_start() on one session, a copy of the data directory without
 * pg_wal's contents and postmaster.pid, pg_backup_stop() whose label becomes
 * backup_label, then standby.signal and primary_conninfo
 * (https://www.postgresql.org/docs/current/warm-standby.html#STANDBY-SERVER-SETUP).
 * The standby streams the WAL from the backup's start over a replication
 * connection (initdb's pg_hba.conf allows local replication). As root the
 * clusters run as the `postgres` user, as the embedded database does.
 */
export interface ReplicaPair {
  primaryUrl(database: string): string;
  replicaUrl(database: string): string;
  /** Stops applying WAL on the standby (it keeps receiving it). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  close(): Promise<void>;
}

const QUICK = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'on', max_connections: '100' };

function start(postgres: string, pgdata: string, port: number, settings: Record<string, string>, ids?: { uid: number; gid: number }): Promise<ChildProcess> {
  const args = ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='];
  for (const [k, v] of Object.entries(settings)) args.push('-c', `${k}=${v}`);
  return new Promise((resolve, reject) => {
    const child = spawn(postgres, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    let ready = false;
    const onData = (c: Buffer) => {
      if (ready) return;
      output += c.toString();
      // A standby says "ready to accept read-only connections".
      if (output.includes('ready to accept')) {
        ready = true;
        resolve(child);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!ready) reject(new Error(`PostgreSQL exited during start-up (code ${code}): ${output.slice(-2000)}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT');
  });
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  const bin = (await loadBinaries()) as { postgres: string; initdb: string };
  const ids = runAsIds();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-replica-'));
  if (ids) chmodSync(dir, 0o711);
  const primaryDir = path.join(dir, 'primary');
  const replicaDir = path.join(dir, 'replica');
  mkdirSync(primaryDir, { mode: 0o700 });
  if (ids) execFileSync('chown', [`${ids.uid}:${ids.gid}`, primaryDir]);
  execFileSync(bin.initdb, ['--pgdata', primaryDir, '--username', 'postgres', '--auth', 'trust', '--encoding', 'UTF8', '--no-locale'], {
    ...ids,
    stdio: 'ignore',
    env: { ...process.env, LC_ALL: 'C' },
  });
  const primaryPort = await freePort();
  const replicaPort = await freePort();
  // wal_keep_size: the WAL from the backup's start stays until the standby has streamed it.
  const primary = await start(bin.postgres, primaryDir, primaryPort, { ...QUICK, wal_level: 'replica', max_wal_senders: '4', wal_keep_size: '256MB' }, ids);
  let replica: ChildProcess | null = null;
  try {
    const backup = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${primaryPort}/postgres` });
    await backup.connect();
    await backup.query(`SELECT pg_backup_start('test replica', true)`);
    cpSync(primaryDir, replicaDir, {
      recursive: true,
      filter: (src) => {
        const rel = path.relative(primaryDir, src);
        // pg_wal's directories (archive_status, summaries) but none of its segments.
        return !['postmaster.pid', 'postmaster.opts'].includes(rel) && !(rel.startsWith(`pg_wal${path.sep}`) && !statSync(src).isDirectory());
      },
    });
    const { rows } = await backup.query<{ labelfile: string }>('SELECT labelfile FROM pg_backup_stop(true)');
    await backup.end();
    writeFileSync(path.join(replicaDir, 'backup_label'), rows[0]!.labelfile);
    writeFileSync(path.join(replicaDir, 'standby.signal'), '');
    appendFileSync(path.join(replicaDir, 'postgresql.auto.conf'), `\nprimary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres application_name=test_replica'\nhot_standby = on\n`);
    chmodSync(replicaDir, 0o700);
    if (ids) execFileSync('chown', ['-R', `${ids.uid}:${ids.gid}`, replicaDir]);
    replica = await start(bin.postgres, replicaDir, replicaPort, QUICK, ids);
  } catch (err) {
    await stop(primary);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const onReplica = async <T>(text: string, values: unknown[] = []): Promise<T[]> => {
    const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${replicaPort}/postgres` });
    await c.connect();
    try {
      return (await c.query(text, values)).rows as T[];
    } finally {
      await c.end();
    }
  };
  const onPrimary = async <T>(text: string): Promise<T[]> => {
    const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${primaryPort}/postgres` });
    await c.connect();
    try {
      return (await c.query(text)).rows as T[];
    } finally {
      await c.end();
    }
  };

  const pair: ReplicaPair = {
    primaryUrl: (db) => `postgres://postgres@127.0.0.1:${primaryPort}/${db}`,
    replicaUrl: (db) => `postgres://postgres@127.0.0.1:${replicaPort}/${db}`,
    pauseReplay: async () => void (await onReplica('SELECT pg_wal_replay_pause()')),
    resumeReplay: async () => void (await onReplica('SELECT pg_wal_replay_resume()')),
    async caughtUp() {
      const [{ lsn }] = await onPrimary<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
      for (let i = 0; i < 300; i++) {
        const [row] = await onReplica<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn]);
        if (row?.done) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`the standby did not replay up to ${lsn} within 30 s`);
    },
    async stopReplica() {
      if (replica) await stop(replica);
      replica = null;
    },
    async startReplica() {
      replica ??= await start(bin.postgres, replicaDir, replicaPort, QUICK, ids);
    },
    async close() {
      if (replica) await stop(replica);
      await stop(primary);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return pair;
}
