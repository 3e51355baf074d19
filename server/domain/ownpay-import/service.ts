import { createDecipheriv, createHash } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { transaction, type Db } from '../db.ts';
import { findOrCreateCustomer } from '../customers/service.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { readDump, type DumpRow } from './dump.ts';
import { insertApiKeyByHash, upsertBrandByUuid } from './queries.ts';

/**
 * `npm run cli -- import:ownpay`: an OwnPay database export into this service
 * (README, "Importing an OwnPay installation"). Tables and columns as own-pay/OwnPay database/schema.sql
 * defines them. In one transaction; a dry run does all of it and rolls back,
 * so its report is exactly what the import would do. Re-running imports
 * nothing twice: brands are found by the OwnPay merchant's uuid, keys by their
 * hash, customers by their email or phone (our blind index).
 *
 * - op_merchants → brands (the `is_platform` "All Brands" row is not a brand;
 *   `suspended`/`pending` become `disabled`).
 * - op_api_keys → API keys, live mode. OwnPay stores `sha256(hex)` of the whole
 *   key (its BearerAuthMiddleware.php), as we do: the hash is kept and the
 *   merchant's existing key keeps its identity. Rows whose hash is not a
 *   sha256 are refused. `revoked`, `locked` and expired keys arrive revoked.
 * - op_customers → customers of the brand's live mode, re-encrypted under our
 *   keys. OwnPay encrypts them with AES-256-GCM under sha256(ENCRYPTION_KEY)
 *   (its src/Security/FieldEncryptor.php: base64 of IV 12 ‖ tag 16 ‖ ciphertext);
 *   without that key they are refused. A customer with neither a readable email
 *   nor phone is refused (ours need one of them).
 * - op_gateways / op_gateway_configs / op_manual_gateways and op_transactions
 *   are counted and refused, with the reason (see REFUSED_TABLES).
 */

export const OWNPAY_TABLES = ['op_merchants', 'op_api_keys', 'op_customers', 'op_gateways', 'op_manual_gateways', 'op_transactions'] as const;

const REFUSED_TABLES = {
  op_gateways: "OwnPay's gateway catalogue: ours comes from presets (`npm run cli -- gateway:create --preset …`) with their official SMS senders and templates",
  op_manual_gateways:
    "a manual gateway's SMS regex (`sms_regex_template`) is not our template language and its payment number is a receiving account to re-enter: create the gateway from a preset and set its account",
  op_transactions:
    'past transactions stay in OwnPay: ours are created by a payment intent and completed by evidence (an SMS, a callback, a verification); importing bare rows would give completed payments without either',
} as const;

export interface RefusedRow {
  table: string;
  id: string | null;
  reason: string;
}

export interface OwnpayImportReport {
  dry_run: boolean;
  brands: { created: number; existing: number };
  api_keys: { created: number; existing: number };
  customers: { created: number; existing: number };
  refused: RefusedRow[];
  refused_counts: Record<string, number>;
}

export interface OwnpayImportOptions {
  dryRun: boolean;
  /** OwnPay's ENCRYPTION_KEY (or APP_KEY), to read its customers; never stored or logged. */
  ownpayEncryptionKey?: string | null;
  now?: Date;
}

class Rollback extends Error {}

/** Opens an OwnPay FieldEncryptor value; null when it does not open. */
export function openOwnpayField(key: Buffer, value: string | null): string | null {
  if (value === null || value === '') return null;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length < 12 + 16) return null;
  try {
    const d = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12), { authTagLength: 16 });
    d.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([d.update(bytes.subarray(28)), d.final()]).toString('utf8');
  } catch {
    return null;
  }
}

const mysqlTime = (v: string | null): Date | null => (v ? new Date(`${v.replace(' ', 'T')}Z`) : null);

export async function importOwnpayDump(em: Db, keys: PersonalDataKeys, dumpSql: string, opts: OwnpayImportOptions): Promise<OwnpayImportReport> {
  let tables: Map<string, DumpRow[]>;
  try {
    tables = readDump(dumpSql, OWNPAY_TABLES);
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `Not a readable OwnPay export: ${(err as Error).message}`, { field: 'file' });
  }
  if ((tables.get('op_merchants') ?? []).length === 0) {
    throw new AppError('VALIDATION_ERROR', 'The export has no op_merchants rows: is it an OwnPay database.sql?', { field: 'file' });
  }
  const now = opts.now ?? new Date();
  const ownpayKey = opts.ownpayEncryptionKey ? createHash('sha256').update(opts.ownpayEncryptionKey, 'utf8').digest() : null;
  const report: OwnpayImportReport = {
    dry_run: opts.dryRun,
    brands: { created: 0, existing: 0 },
    api_keys: { created: 0, existing: 0 },
    customers: { created: 0, existing: 0 },
    refused: [],
    refused_counts: {},
  };
  const refuse = (table: string, id: string | null, reason: string) => {
    report.refused.push({ table, id, reason });
    report.refused_counts[table] = (report.refused_counts[table] ?? 0) + 1;
  };

  const work = async (tx: Db) => {
    const brandOf = new Map<string, number>();
    for (const m of tables.get('op_merchants')!) {
      if (m.is_platform === '1') continue;
      if (!m.id || !m.uuid || !/^[0-9a-f-]{36}$/i.test(m.uuid) || !m.name?.trim()) {
        refuse('op_merchants', m.id ?? null, 'missing id, uuid or name');
        continue;
      }
      const brand = await upsertBrandByUuid(tx, {
        uuid: m.uuid.toLowerCase(),
        name: m.name.trim().slice(0, 200),
        timezone: m.timezone?.trim() || 'UTC',
        status: m.status === 'active' || m.status === null ? 'active' : 'disabled',
      });
      brandOf.set(m.id, brand.id);
      report.brands[brand.created ? 'created' : 'existing'] += 1;
    }

    for (const k of tables.get('op_api_keys')!) {
      const brandId = k.merchant_id ? brandOf.get(k.merchant_id) : undefined;
      if (brandId === undefined) {
        refuse('op_api_keys', k.id, 'its merchant is not in the export');
        continue;
      }
      const hash = k.key_hash?.trim().toLowerCase() ?? '';
      if (!/^[0-9a-f]{64}$/.test(hash)) {
        refuse('op_api_keys', k.id, 'key_hash is not a sha256 of the key: the hashing is not compatible with ours, so the merchant must issue a new key');
        continue;
      }
      const expires = mysqlTime(k.expires_at);
      const created = await insertApiKeyByHash(tx, {
        brandId,
        name: (k.name?.trim() || 'Imported from OwnPay').slice(0, 200),
        prefix: `op_${(k.key_prefix ?? '').slice(0, 8)}`,
        keyHash: hash,
        revoked: k.status !== 'active' || (expires !== null && expires <= now),
        createdAt: mysqlTime(k.created_at),
        lastUsedAt: mysqlTime(k.last_used_at),
      });
      report.api_keys[created ? 'created' : 'existing'] += 1;
    }

    for (const c of tables.get('op_customers')!) {
      const brandId = c.merchant_id ? brandOf.get(c.merchant_id) : undefined;
      if (brandId === undefined) {
        refuse('op_customers', c.id, 'its merchant is not in the export');
        continue;
      }
      if (!ownpayKey) {
        refuse('op_customers', c.id, "personal data is encrypted with OwnPay's ENCRYPTION_KEY: give it (--ownpay-key-env) to import customers");
        continue;
      }
      const fields = { name: openOwnpayField(ownpayKey, c.name_enc), email: openOwnpayField(ownpayKey, c.email_enc), phone: openOwnpayField(ownpayKey, c.phone_enc) };
      if ((c.email_enc && fields.email === null) || (c.phone_enc && fields.phone === null) || (c.name_enc && fields.name === null)) {
        refuse('op_customers', c.id, "a field does not decrypt with the given OwnPay key (wrong key, or a corrupt value)");
        continue;
      }
      try {
        const mode: Mode = 'live';
        const r = await findOrCreateCustomer(tx, keys, brandId, mode, fields);
        report.customers[r.created ? 'created' : 'existing'] += 1;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        refuse('op_customers', c.id, `not a customer we can hold: ${err.message}`);
      }
    }

    for (const [table, reason] of Object.entries(REFUSED_TABLES)) {
      for (const row of tables.get(table)!) refuse(table, row.id ?? null, reason);
    }
    if (opts.dryRun) throw new Rollback();
  };

  try {
    await transaction(em, work);
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
  return report;
}
