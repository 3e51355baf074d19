import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../server/infra/database/embedded.ts';
import { freePort, withDatabase } from '../../server/infra/database/local-server.ts';



/**
 * Runs `fn` against a new, empty database and drops it afterwards. The
 * database is created on the server of DATABASE_URL (or TEST_DATABASE_URL),
 * whose user must be allowed to create databases; with neither set, on a
 * throw-away embedded PostgreSQL, as `npm test` does, so the schema tools need
 * no database on the machine. The application's own database is never touched.
 */
export async function withScratchDatabase<T>(fn: (url: string) => Promise<T>): Promise<T> {
  let serverUrl = process.env.DATABASE_URL || process.env.TEST_DATABASE_URL;
  let embedded: EmbeddedPostgres | null = null;
  let tmpDir: string | null = null;
  try {
    if (!serverUrl) {
      tmpDir = mkdtempSync(path.join(os.tmpdir(), 'pc-schema-pg-'));
      embedded = await startEmbeddedPostgres({
        dataDir: tmpDir,
        port: await freePort(),
        password: randomBytes(12).toString('hex'),
        database: 'postgres',
        // Thrown away afterwards: durability does not matter, speed does.
        settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
      });
      serverUrl = embedded.url;
    }
    const name = `pc_schema_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
      try {
        return await fn(withDatabase(serverUrl, name));
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      }
    } finally {
      await admin.end();
    }
  } finally {
    await embedded?.stop();
    if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
  }
}
