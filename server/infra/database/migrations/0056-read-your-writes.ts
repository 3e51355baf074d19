import { Migration } from '@mikro-orm/migrations';

/**
 * Where each client's last write ended in the write-ahead log, so that with a
 * read replica (DATABASE_READ_URL) a client's lag-tolerant reads stay on the
 * primary until the replica has replayed its writes (docs/read-replicas.md).
 */
export class Migration0056ReadYourWrites extends Migration {
  override name = '0056-read-your-writes';

  override up(): void {
    this.addSql(`create table "read_your_writes" ("principal" varchar(100) not null, "wal_lsn" varchar(32) not null, "written_at" timestamptz not null, primary key ("principal"));`);
  }

  override down(): void {
    this.addSql(`drop table if exists "read_your_writes";`);
  }
}
