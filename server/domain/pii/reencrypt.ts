import { isUnboundToken, PiiCipherError } from '../../infra/crypto/pii-cipher.ts';
import { writeRewrittenRow } from './queries.ts';
import type { Logger } from '../../infra/logger.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { legacyTables, type LegacyTable, type Reader } from './legacy-tables.ts';
import { transaction, type Db } from '../db.ts';

/** Rows per transaction: small enough that a batch holds its row locks briefly. */
const REENCRYPT_BATCH = 200;

export interface ReencryptReport {
  /** Rows rewritten, per table. */
  rewritten: Record<string, number>;
  /** Values that could not be read (corrupt) and were left as they were, per table. */
  unreadable: Record<string, number>;
}

/**
 * Moves every row still in the old format (`pii_v = 1`, see migration
 * 0011-pii-binding) to the new one: unbound `v1` tokens re-encrypted bound to
 * their row and brand, text stored in clear (SMS senders, notification titles
 * and bodies) encrypted, customer blind indexes and SMS content hashes
 * recomputed with the brand. Each batch is one transaction that rewrites its
 * rows and sets `pii_v = 2`, so the run is resumable (a crash loses at most the
 * batch in flight, which is rolled back and done again) and idempotent (a
 * second run finds no `pii_v = 1` row and changes nothing). Run under the
 * migration lock (orm.ts), so two processes never rewrite side by side.
 */
export async function reencryptPersonalData(db: Db, keys: PersonalDataKeys, logger?: Logger, batchSize = REENCRYPT_BATCH): Promise<ReencryptReport> {
  const report: ReencryptReport = { rewritten: {}, unreadable: {} };
  for (const spec of legacyTables) {
    let rewritten = 0;
    let unreadable = 0;
    for (;;) {
      const done = await rewriteBatch(db, keys, spec, batchSize, () => unreadable++);
      if (done === 0) break;
      rewritten += done;
    }
    if (rewritten > 0) {
      report.rewritten[spec.table] = rewritten;
      logger?.info({ table: spec.table, rows: rewritten, unreadable }, 'personal data re-encrypted bound to row and brand');
    }
    if (unreadable > 0) {
      report.unreadable[spec.table] = unreadable;
      logger?.warn({ table: spec.table, unreadable }, 'personal data values that could not be decrypted were left as they were; reads of them fail');
    }
  }
  return report;
}

async function rewriteBatch(db: Db, keys: PersonalDataKeys, spec: LegacyTable, batchSize: number, onUnreadable: () => void): Promise<number> {
  return transaction(db, async (tx) => {
    const rows = await spec.select(tx, batchSize);
    for (const row of rows) {
      const values = spec.rewrite(row, reader(keys, spec.table, row.id, onUnreadable), keys);
      await writeRewrittenRow(tx, spec.table, row.id, values);
    }
    return rows.length;
  });
}

function reader(keys: PersonalDataKeys, table: string, id: unknown, onUnreadable: () => void): Reader {
  return {
    token(value, context) {
      if (value === null) return null;
      try {
        // Only an unbound token is old; anything else in a pii_v = 1 row is corrupt.
        if (!isUnboundToken(value)) throw new PiiCipherError('malformed', 'not a v1 token');
        return keys.pii.decryptUnbound(value, context);
      } catch (err) {
        // A key missing from configuration is fixable and must not leave rows behind: stop, and say which.
        if (err instanceof PiiCipherError && err.reason === 'unknown_key') {
          throw new PiiCipherError('unknown_key', `Cannot re-encrypt ${table} row ${String(id)}: ${err.message}. Add the old key back to PII_ENCRYPTION_KEYS (after the new active one) and restart.`);
        }
        if (!(err instanceof PiiCipherError)) throw err;
        onUnreadable();
        return null;
      }
    },
  };
}
