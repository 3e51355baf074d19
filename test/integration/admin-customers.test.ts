import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { adminRequest, auditRows, runCli } from './admin-support.ts';
import { consoleRequest, newOperator, session } from './console-support.ts';

/** Customers in the admin API, the CLI and their CSV import and export (README.md, Customers). */

let t: TestContext;
let brandId: number;
let otherBrand: number;
const dir = mkdtempSync(path.join(tmpdir(), 'customers-csv-'));

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
  brandId = (await t.createBrand('Import Shop')).brandId;
  otherBrand = (await t.createBrand('Other Shop')).brandId;
});
afterAll(() => t?.close());

const importCsv = (csv: string, opts: { dry_run?: boolean; mode?: string; brand?: number } = {}) =>
  adminRequest(t, 'POST', `/brands/${opts.brand ?? brandId}/customers/imports`, { mode: opts.mode ?? 'live', csv, dry_run: opts.dry_run ?? false });
const countRows = async (b = brandId, mode = 'live') =>
  Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM customers WHERE brand_id = $1 AND mode = $2', [b, mode]))[0]!.n);

describe('CSV import', () => {
  const file = [
    'Name,Email,Phone',
    'Ayesha Akter,ayesha@example.com,01712340001',
    'Bad Mail,not-an-email,01712340002',
    'Bad Phone,badphone@example.com,01212345678',
    'No Contact,,',
    'Ayesha Again,AYESHA@example.com,',
    '"Quoted, Name",quoted@example.com,+8801712340003',
    'Phone Only,,017-1234-0004',
  ].join('\r\n');

  it('a dry run reports every refused row with its line and reason and writes nothing', async () => {
    const res = await importCsv(file, { dry_run: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      dry_run: true,
      total_rows: 7,
      accepted: 3,
      refused: [
        { line: 3, reason: 'invalid_email', field: 'email', message: expect.any(String) },
        { line: 4, reason: 'invalid_phone', field: 'phone', message: expect.any(String) },
        { line: 5, reason: 'missing_contact', field: null, message: expect.any(String) },
        { line: 6, reason: 'duplicate_in_file', field: 'email', message: 'Same email as line 2' },
      ],
    });
    expect(await countRows()).toBe(0);
    expect(await auditRows(t, 'customer.import')).toEqual([]);
  });

  it('imports the valid rows in one go, audited; the same file again imports nothing twice', async () => {
    const res = await importCsv(file);
    expect(res.body.data).toMatchObject({ dry_run: false, total_rows: 7, accepted: 3 });
    expect(await countRows()).toBe(3);
    const [audit] = await auditRows(t, 'customer.import');
    expect(audit).toMatchObject({ brand_id: String(brandId), after: { mode: 'live', rows: 7, imported: 3, refused: 4 } });
    expect(JSON.stringify(audit)).not.toContain('ayesha');
    const again = await importCsv(file);
    expect(again.body.data.accepted).toBe(0);
    expect(again.body.data.refused.filter((r: { reason: string }) => r.reason === 'duplicate_existing').map((r: { line: number }) => r.line)).toEqual([2, 7, 8]);
    expect(await countRows()).toBe(3);
    // Customers are per mode: the same file into test mode imports them there.
    expect((await importCsv(file, { mode: 'test' })).body.data.accepted).toBe(3);
    expect(await countRows(brandId, 'test')).toBe(3);
  });

  it.each([
    ['an unclosed quote', 'name,email\n"Broken,broken@example.com\n'],
    ['an unknown column', 'name,email,address\nX,x@example.com,Dhaka\n'],
    ['neither email nor phone column', 'name\nX\n'],
    ['a row with more cells than the header', 'name,email\nX,x@example.com,extra\n'],
  ])('%s: 400 VALIDATION_ERROR on field csv, nothing imported', async (_n, csv) => {
    const before = await countRows(otherBrand);
    const res = await importCsv(csv, { brand: otherBrand });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'csv' });
    expect(await countRows(otherBrand)).toBe(before);
  });

  it('too many rows, or a file over the size limit: 413 CUSTOMER_IMPORT_TOO_LARGE, nothing imported', async () => {
    const rows = Array.from({ length: 1001 }, (_, i) => `r${i}@example.com`);
    const many = await importCsv(['email', ...rows].join('\n'), { brand: otherBrand });
    expect([many.status, many.body.errors[0].code]).toEqual([413, 'CUSTOMER_IMPORT_TOO_LARGE']);
    const big = await importCsv(`name,email\n${'x'.repeat(95 * 1024)},big@example.com\n`, { brand: otherBrand });
    expect([big.status, big.body.errors[0].code]).toEqual([413, 'CUSTOMER_IMPORT_TOO_LARGE']);
    expect(await countRows(otherBrand)).toBe(0);
  });
});

describe('create, change, delete and export', () => {
  it('creates (409 on a duplicate naming the field), changes and erases, each audited without the personal data', async () => {
    const created = await adminRequest(t, 'POST', `/brands/${otherBrand}/customers`, { mode: 'live', name: 'Formula', email: 'formula@example.com', phone: '01712340099' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data).toMatchObject({ brand_id: otherBrand, mode: 'live', email_masked: 'f***@example.com', phone_masked: '+88017*****099' });
    const dup = await adminRequest(t, 'POST', `/brands/${otherBrand}/customers`, { mode: 'live', phone: '+8801712340099' });
    expect([dup.status, dup.body.errors[0].code, dup.body.errors[0].field]).toEqual([409, 'CUSTOMER_PHONE_TAKEN', 'phone']);
    const id = created.body.data.id;
    const changed = await adminRequest(t, 'PATCH', `/customers/${id}`, { name: '=HYPERLINK("http://evil.example")' });
    expect(changed.status).toBe(200);
    const [audit] = await auditRows(t, 'customer.update');
    expect(audit!.after).toMatchObject({ changed: ['name'], has_email: true });
    expect(JSON.stringify(audit)).not.toMatch(/formula@|HYPERLINK/);

    const exported = await adminRequest(t, 'POST', `/brands/${otherBrand}/customers/exports`, { mode: 'live' });
    expect(exported.status).toBe(200);
    const lines = exported.body.data.csv.trim().split(/\r?\n/);
    expect(lines[0]).toBe('id,uuid,name,email,phone,created_at');
    expect(lines[1]).toContain(`"'=HYPERLINK(""http://evil.example"")",formula@example.com,'+8801712340099,`);
    expect((await auditRows(t, 'customer.export')).at(-1)).toMatchObject({ brand_id: String(otherBrand), after: { mode: 'live', count: 1 } });

    expect((await adminRequest(t, 'DELETE', `/customers/${id}`)).status).toBe(204);
    expect((await adminRequest(t, 'DELETE', `/customers/${id}`)).body.errors[0].code).toBe('CUSTOMER_NOT_FOUND');
    expect((await auditRows(t, 'customer.erase')).length).toBe(1);
    expect((await adminRequest(t, 'GET', `/brands/${otherBrand}/customers`)).body.data).toEqual([]);
  });

  it('an exported file imports back unchanged (the formula guard is undone), adding nothing twice', async () => {
    const exported = (await adminRequest(t, 'POST', `/brands/${brandId}/customers/exports`, { mode: 'live' })).body.data.csv;
    const back = await importCsv(exported, { dry_run: true });
    expect(back.body.data).toMatchObject({ total_rows: 3, accepted: 0 });
    expect(back.body.data.refused.every((r: { reason: string }) => r.reason === 'duplicate_existing')).toBe(true);
  });
});

describe('roles and brand scopes', () => {
  it("an operator limited to one brand gets 404 for another brand's customers; a viewer may list but not change; only owners export", async () => {
    const scoped = await newOperator(t, 'operator', { brandIds: [brandId] });
    const s = await session(t, scoped.email);
    expect((await consoleRequest(t, s, 'GET', `/brands/${brandId}/customers`)).status).toBe(200);
    const foreign = await adminRequest(t, 'POST', `/brands/${otherBrand}/customers`, { mode: 'live', email: 'foreign@example.com' });
    for (const [method, p, body] of [
      ['GET', `/brands/${otherBrand}/customers`, undefined],
      ['POST', `/brands/${otherBrand}/customers/imports`, { mode: 'live', csv: 'email\nx@example.com\n' }],
      ['PATCH', `/customers/${foreign.body.data.id}`, { name: 'x' }],
      ['DELETE', `/customers/${foreign.body.data.id}`, undefined],
    ] as const) {
      const res = await consoleRequest(t, s, method, p, body);
      expect(res.status, `${method} ${p}`).toBe(404);
    }
    const exp = await consoleRequest(t, s, 'POST', `/brands/${brandId}/customers/exports`, { mode: 'live' });
    expect([exp.status, exp.body.errors[0].code]).toEqual([403, 'FORBIDDEN']);
    const viewer = await session(t, (await newOperator(t, 'viewer')).email);
    expect((await consoleRequest(t, viewer, 'GET', `/brands/${brandId}/customers`)).status).toBe(200);
    expect((await consoleRequest(t, viewer, 'POST', `/brands/${brandId}/customers`, { mode: 'live', email: 'v@example.com' })).status).toBe(403);
  });
});

describe('CLI', () => {
  it('customers:import checks unless --commit, customers:export writes the CSV', async () => {
    const brand = (await t.createBrand('CLI Shop')).brandId;
    const input = path.join(dir, 'in.csv');
    writeFileSync(input, 'name,email,phone\nCli One,cli1@example.com,\nCli Bad,bad,\n');
    const check = await runCli(t, ['customers:import', '--brand', String(brand), '--file', input]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain('CHECK ONLY');
    expect(check.stdout).toContain('line 3: invalid_email');
    expect(await countRows(brand)).toBe(0);
    const commit = await runCli(t, ['customers:import', '--brand', String(brand), '--file', input, '--commit']);
    expect(commit.stdout).toContain('imported: 1');
    const out = path.join(dir, 'out.csv');
    const exp = await runCli(t, ['customers:export', '--brand', String(brand), '--out', out]);
    expect(exp.code, exp.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('Cli One,cli1@example.com,');
  });
});
