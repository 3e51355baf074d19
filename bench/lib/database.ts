import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { createOrm, migrate, type Orm } from '../../server/infra/database/orm.ts';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface BenchDatabase {
  url: string;
  /** The migrated ORM, for seeding through the real services; closed by stop(). */
  orm: Orm;
  /** PostgreSQL server version string (for the report). */
  version: string;
  stop(): Promise<void>;
}

/**
 * Every benchmark gets a PostgreSQL of its own in a temp dir, so a run never
 * touches `.data/` or a test cluster, and two benchmarks never share caches.
 * Durability settings stay at PostgreSQL's defaults (fsync on): the write
 * paths pay the real WAL flush, and ours and the baseline pay it alike.
 */
export async function startBenchDatabase(): Promise<BenchDatabase> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pc-bench-'));
  const pg = await startEmbeddedPostgres({
    dataDir: dir,
    port: await freePort(),
    password: randomBytes(12).toString('hex'),
    database: 'bench',
    // Ours (pool 10 + pg-boss 4), the baseline (pool 10), the seeder and the orchestrator fit easily.
    settings: { max_connections: '200' },
  });
  let orm: Orm | undefined;
  try {
    orm = await createOrm({ url: pg.url, poolMax: 4 });
    await migrate(orm);
    const [{ server_version: version }] = (await orm.em.getConnection().execute('SHOW server_version')) as [{ server_version: string }];
    const opened = orm;
    return {
      url: pg.url,
      orm: opened,
      version,
      async stop() {
        await opened.close().catch(() => undefined);
        await pg.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await orm?.close().catch(() => undefined);
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
