import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { importOwnpayDump } from '../../server/domain/ownpay-import/service.ts';
import { readDump } from '../../server/domain/ownpay-import/dump.ts';
import { hashApiKey } from '../../server/infra/crypto/tokens.ts';
import { getCustomerByIdentifier } from '../../server/domain/customers/service.ts';

/**
 * The fixture test/fixtures/ownpay/database.sql follows own-pay/OwnPay
 * database/schema.sql (tables op_merchants, op_api_keys, op_customers,
 * op_gateways, op_manual_gateways, op_transactions) and the two ways its
 * src/Update/BackupService.php writes database.sql (mysqldump, or one quoted
 * INSERT per row); customer fields are sealed as its src/Security/FieldEncryptor.php does.
 */
const DUMP = readFileSync(new URL('../fixtures/ownpay/database.sql', import.meta.url), 'utf8');
const OWNPAY_KEY = 'fixture-ownpay-encryption-key';
const DHAKA = '6f1c2b7e-3d4a-4e5f-9a8b-1c2d3e4f5a6b';
const SUSPENDED = '7a2d3c8f-4e5b-4f60-8b9c-2d3e4f5a6b7c';

let t: TestContext;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const em = () => t.runtime.deps.db;
const run = (dryRun: boolean, key: string | null = OWNPAY_KEY, dump = DUMP) => importOwnpayDump(em(), t.runtime.deps.crypto, dump, { dryRun, ownpayEncryptionKey: key });
const brandByUuid = async (uuid: string) => (await t.sql<any>('SELECT * FROM brands WHERE uuid = $1', [uuid]))[0];

describe('readDump', () => {
  it('reads mysqldump multi-row INSERTs, PDO-style quoted rows and column-listed INSERTs, with MySQL escapes', () => {
    const tables = readDump(DUMP, ['op_merchants', 'op_customers', 'op_transactions']);
    expect(tables.get('op_merchants')).toHaveLength(4);
    expect(tables.get('op_merchants')![1]).toMatchObject({ id: '2', uuid: DHAKA, description: "Books; 'rare' ones", phone: '+8801700000000', is_platform: '0', logo_path: null });
    expect(tables.get('op_customers')).toHaveLength(5);
    expect(tables.get('op_transactions')!.map((r) => [r.trx_id, r.amount, r.status])).toEqual([
      ['OP123', '500.00', 'completed'],
      ['OP124', '750.50', 'pending'],
    ]);
  });
});

describe('importOwnpayDump', () => {
  it('a dry run reports what would happen and writes nothing', async () => {
    const report = await run(true);
    expect(report).toMatchObject({
      dry_run: true,
      brands: { created: 2, existing: 0 },
      api_keys: { created: 2, existing: 0 },
      customers: { created: 3, existing: 0 },
      refused_counts: { op_merchants: 1, op_api_keys: 2, op_customers: 2, op_gateways: 2, op_manual_gateways: 1, op_transactions: 2 },
    });
    expect(report.refused).toContainEqual({ table: 'op_api_keys', id: '2', reason: expect.stringContaining('not a sha256') });
    expect(report.refused).toContainEqual({ table: 'op_api_keys', id: '4', reason: 'its merchant is not in the export' });
    expect(report.refused).toContainEqual({ table: 'op_customers', id: '3', reason: expect.stringContaining('email or a phone') });
    expect(report.refused).toContainEqual({ table: 'op_customers', id: '4', reason: expect.stringContaining('does not decrypt') });
    expect(report.refused).toContainEqual({ table: 'op_merchants', id: '4', reason: 'missing id, uuid or name' });
    expect(await brandByUuid(DHAKA)).toBeUndefined();
  });

  it('imports in one go: brands by uuid, key hashes that still authenticate their key, customers re-encrypted under our keys', async () => {
    const report = await run(false);
    expect(report).toMatchObject({ dry_run: false, brands: { created: 2 }, api_keys: { created: 2 }, customers: { created: 3 } });

    const dhaka = await brandByUuid(DHAKA);
    expect(dhaka).toMatchObject({ name: 'Dhaka Books', timezone: 'Asia/Dhaka', status: 'active' });
    expect(await brandByUuid(SUSPENDED)).toMatchObject({ status: 'disabled' });
    expect(await brandByUuid('00000000-0000-4000-8000-000000000001')).toBeUndefined();

    const keys = await t.sql<any>('SELECT k.* FROM api_keys k JOIN brands b ON b.id = k.brand_id WHERE b.uuid = ANY($1) ORDER BY k.id', [[DHAKA, SUSPENDED]]);
    expect(keys.map((k: any) => [k.name, k.prefix, k.mode, k.revoked_at === null])).toEqual([
      ['WooCommerce', 'op_ab12cd34', 'live', true],
      ['Revoked', 'op_cd90ef12', 'live', false],
    ]);
    // OwnPay's hash is sha256 of the whole key, as ours: the merchant's existing key is the one stored.
    expect(keys[0].key_hash).toBe(hashApiKey('op_ab12cd34.K3yMaterialForTheFixture0001'));
    // ...and it authenticates here, in OwnPay's dialect; the revoked one does not.
    const ok = await t.request('GET', '/api/v1/health', { token: 'op_ab12cd34.K3yMaterialForTheFixture0001' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await t.request('GET', '/api/v1/payments', { token: 'op_ab12cd34.K3yMaterialForTheFixture0001' })).status).toBe(200);

    const brandId = Number(dhaka.id);
    const rahim = await getCustomerByIdentifier(em(), t.runtime.deps.crypto, brandId, 'live', 'rahim@example.com');
    expect(rahim).toMatchObject({ name: 'Rahim Uddin', email: 'rahim@example.com' });
    const karim = await getCustomerByIdentifier(em(), t.runtime.deps.crypto, brandId, 'live', '01811111111');
    expect(karim.name).toBe("Karim O'Brien");
    const rows = await t.sql<any>('SELECT * FROM customers WHERE brand_id = $1', [brandId]);
    expect(JSON.stringify(rows)).not.toContain('rahim@example.com');
    expect(JSON.stringify(rows)).not.toContain('Rahim');
  });

  it('re-running imports nothing twice', async () => {
    const report = await run(false);
    expect(report).toMatchObject({ brands: { created: 0, existing: 2 }, api_keys: { created: 0, existing: 2 }, customers: { created: 0, existing: 3 } });
    expect(Number((await t.sql<any>('SELECT count(*) AS n FROM brands WHERE uuid = $1', [DHAKA]))[0].n)).toBe(1);
  });

  it('without the OwnPay key customers are refused, the rest imported', async () => {
    const dump = DUMP.replaceAll(DHAKA, '9e9e9e9e-1111-4222-8333-444455556666').replaceAll(SUSPENDED, '9e9e9e9e-1111-4222-8333-777788889999').replace(/ab12cd34','[0-9a-f]{64}'/, "ab12cd34','" + 'f'.repeat(64) + "'").replace(/cd90ef12','[0-9a-f]{64}'/, "cd90ef12','" + 'e'.repeat(64) + "'");
    const report = await run(true, null, dump);
    expect(report.customers).toEqual({ created: 0, existing: 0 });
    expect(report.refused_counts.op_customers).toBe(5);
    expect(report.refused).toContainEqual({ table: 'op_customers', id: '1', reason: expect.stringContaining('--ownpay-key-env') });
    expect(report.brands.created).toBe(2);
  });

  it('refuses what is not an OwnPay export, writing nothing', async () => {
    await expect(run(true, null, 'SELECT 1;')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(run(false, null, "INSERT INTO `op_merchants` VALUES ('1','x'")).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
