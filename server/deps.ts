import type { PgBoss } from 'pg-boss';
import type { Config } from './config.ts';
import type { Db } from './domain/db.ts';
import type { Logger } from './infra/logger.ts';
import type { Secrets } from './infra/secrets.ts';
import type { PiiCipher } from './infra/crypto/pii-cipher.ts';
import type { NotificationHub } from './infra/database/notifications.ts';
import type { ReadRouter } from './domain/read-routing/router.ts';

/**
 * Everything the app needs, built once in main.ts (or a test harness) and
 * passed down explicitly: no module-level singletons.
 */
export interface AppDeps {
  config: Config;
  secrets: Secrets;
  /** The database (Kysely over the service's pool; server/infra/database/database.ts). */
  db: Db;
  /** Where the reads that tolerate lag go: the read replica, or `db` (domain/read-routing/router.ts). */
  reads: ReadRouter;
  boss: PgBoss;
  logger: Logger;
  /** This process's one LISTEN connection and its in-memory subscribers (the checkout's status streams). */
  notifications: NotificationHub;
  /** Personal-data keys parsed from secrets (never stored in the database, never logged). */
  crypto: { pii: PiiCipher; blindIndexKey: Buffer };
  /** Mutable process state: readiness turns false as soon as shutdown starts. */
  state: { shuttingDown: boolean };
}
