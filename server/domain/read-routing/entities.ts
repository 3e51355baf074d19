import { defineEntity, p } from '@mikro-orm/core';

/**
 * Where each client's last write ended in the primary's write-ahead log
 * (router.ts): its lag-tolerant reads go to the replica only once the replica
 * has replayed past this point. One row per client (a brand's keys, an
 * operator), overwritten by each write, so the table does not grow with
 * traffic. Written and read on the primary only.
 */
export const ReadYourWrites = defineEntity({
  name: 'ReadYourWrites',
  tableName: 'read_your_writes',
  properties: {
    principal: p.string().length(100).primary(),
    /** A PostgreSQL `pg_lsn` in its text form (`16/B374D848`). */
    walLsn: p.string().length(32),
    writtenAt: p.datetime(),
  },
});
