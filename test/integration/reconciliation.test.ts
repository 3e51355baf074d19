import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dhakaToday } from '../../server/domain/reconciliation/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { pairDevice, type PairedDevice } from '../support/device.ts';
import { seedGateway, seedTransaction } from '../support/seed.ts';
import { bdNow, creditTemplate, creditWithBalance, forwardSms, newGatewayTrxId, sendMoneyTemplate } from '../support/sms-matching.ts';
import type { GatewayView } from '../../server/domain/gateways/service.ts';
import { adminRequest, auditRows, runCli } from './admin-support.ts';
import { consoleRequest, newOperator, session } from './console-support.ts';

/**
 * Statement reconciliation through the admin API (docs/reconciliation.md): each
 * category from a real-format bKash statement, bad files refused whole, other
 * brands' accounts and reports refused, and nothing completed by it.
 */

let t: TestContext;
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PAIRING: 'off' });
});
afterAll(() => t?.close());
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.log(t.logs.filter((l) => l.includes('"level":"error"')).slice(-3).map((l) => JSON.parse(l).err?.message).join('\n'));
});

const HEADER = 'SL,Trx Id,Transaction Date,Trx Type,Sender,Receiver,Receiver Name,Reference,Transacted Amount,Fee,Balance';
const yesterday = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

interface Scene {
  brandId: number;
  apiKey: string;
  phone: PairedDevice;
  gateway: GatewayView;
  sender: string;
  accountId: number;
  number: string;
}

async function scene(name: string): Promise<Scene> {
  const sender = `bK${newGatewayTrxId('').slice(0, 6)}`;
  const gateway = await seedGateway(t, 'bkash', { sms_senders: [sender], sms_templates: [creditTemplate, sendMoneyTemplate] });
  const { brandId, apiKey } = await t.createBrand(name);
  const phone = await pairDevice(t, { brandId });
  const number = `0171${String(brandId).padStart(7, '0')}`.slice(0, 11);
  const res = await adminRequest(t, 'POST', `/brands/${brandId}/wallet-accounts`, { gateway: gateway.code, number, device_id: phone.deviceId });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { brandId, apiKey, phone, gateway, sender, accountId: res.body.data.id, number };
}

const upload = (s: Scene, content: string, day = dhakaToday(), extra: Record<string, unknown> = {}) =>
  adminRequest(t, 'POST', `/wallet-accounts/${s.accountId}/statements`, { day, content, file_name: 'statement.csv', ...extra });

async function stateOf(brandId: number) {
  const txns = await t.sql<{ id: string; status: string; gateway_trx_id: string | null }>('SELECT id, status, gateway_trx_id FROM transactions WHERE brand_id = $1 ORDER BY id', [brandId]);
  const sms = await t.sql<{ id: string; match_status: string; transaction_id: string | null }>('SELECT id, match_status, transaction_id FROM sms_records WHERE brand_id = $1 ORDER BY id', [brandId]);
  return { txns, sms };
}

describe('a day of a bKash account', () => {
  it('finds each category, completes nothing, and a person completes the missed payment through the existing verification', async () => {
    const s = await scene('Recon shop');
    const [t1, t2, t3, t4, t5, t6, t7, t8] = Array.from({ length: 8 }, () => newGatewayTrxId('R'));
    const paid = await seedTransaction(t, { apiKey: s.apiKey, gateway: s.gateway, status: 'awaiting_verification', amount: '500.00', gatewayTrxId: t1 });
    const claimed = await seedTransaction(t, { apiKey: s.apiKey, gateway: s.gateway, status: 'awaiting_verification', amount: '700.00', gatewayTrxId: t2 });
    const open = await seedTransaction(t, { apiKey: s.apiKey, gateway: s.gateway, status: 'pending', amount: '321.00' });

    const answers = await forwardSms(t, s.phone, [
      { sender: s.sender, body: creditWithBalance('500.00', t1!, '1,500.00') },
      { sender: s.sender, body: creditWithBalance('50.00', t4!, '1,550.00') },
      { sender: s.sender, body: creditWithBalance('100.00', t5!, '1,650.00') },
      { sender: s.sender, body: creditWithBalance('200.00', t6!, '1,850.00') },
    ]);
    expect(answers[0]!.match_status).toBe('matched');
    const before = await stateOf(s.brandId);

    const day = dhakaToday();
    const now = bdNow('dmy');
    const statement = [
      `Statement of,${s.number}`,
      HEADER,
      `1,${t1},${now},Send Money,01712345515,${s.number},Shop,,500.00,0.00,"1,500.00"`,
      `2,${t2},${now},Send Money,01812000002,${s.number},Shop,,700.00,0.00,"2,200.00"`,
      `3,${t3},${now},Cash In,01812000003,${s.number},Shop,,321.00,0.00,"2,521.00"`,
      `4,${t5},${now},Send Money,01712345515,${s.number},Shop,,150.00,0.00,"2,671.00"`,
      `5,${t6},${now},Send Money,01712345515,${s.number},Shop,,200.00,5.00,"2,866.00"`,
      `6,${t7},${now},Payment,${s.number},01900000001,Merchant,,20.00,0.00,"2,846.00"`,
      `7,${t8},${yesterday(day).split('-').reverse().join('/')} 10:00,Send Money,01812000008,${s.number},Shop,,99.00,0.00,"1,000.00"`,
    ].join('\n');
    const res = await upload(s, statement, day);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { upload: up, items } = res.body.data;
    expect(up).toMatchObject({ brand_id: s.brandId, wallet_account_id: s.accountId, day, format: 'bkash', mode: 'live', row_count: 7, file_name: 'statement.csv' });
    expect(up.counts).toEqual({ matched: 1, statement_only: 2, sms_only: 1, amount_mismatch: 1, fee_difference: 1 });
    const byTrx = Object.fromEntries(items.map((i: { trx_id: string }) => [i.trx_id, i]));
    expect(byTrx[t1!]).toMatchObject({ category: 'matched', statement_amount: '500.00', sms_amount: '500.00', transaction_id: paid.transaction.id, transaction_status: 'completed', line: 3 });
    expect(byTrx[t2!]).toMatchObject({ category: 'statement_only', sms_record_id: null, transaction_id: claimed.transaction.id, transaction_status: 'awaiting_verification', counterparty: '01812000002' });
    expect(byTrx[t3!]).toMatchObject({ category: 'statement_only', transaction_id: null, hint_transaction_ids: [open.transaction.id] });
    expect(byTrx[t4!]).toMatchObject({ category: 'sms_only', line: null, sms_amount: '50.00', statement_amount: null });
    expect(byTrx[t5!]).toMatchObject({ category: 'amount_mismatch', statement_amount: '150.00', sms_amount: '100.00' });
    expect(byTrx[t6!]).toMatchObject({ category: 'fee_difference', statement_fee: '5.00', sms_fee: '0.00' });
    expect(byTrx[t7!]).toBeUndefined();
    expect(byTrx[t8!]).toBeUndefined();
    // Those needing a person come first.
    expect(items.at(-1).category).toBe('matched');

    // Reconciliation changed no payment and no SMS record.
    expect(await stateOf(s.brandId)).toEqual(before);
    const [audit] = (await auditRows(t, 'statement.reconcile')).filter((a) => a.brand_id === String(s.brandId));
    expect(audit).toMatchObject({ target_type: 'statement_upload', target_id: String(up.id), actor: 'admin' });
    expect(audit!.after).toMatchObject({ wallet_account_id: s.accountId, day, rows: 7, statement_only: 2 });
    expect(JSON.stringify(audit)).not.toContain('01812000002');

    // The counterparty is stored encrypted.
    const [line] = await t.sql<{ counterparty_encrypted: string }>('SELECT counterparty_encrypted FROM statement_lines WHERE upload_id = $1 AND trx_id = $2', [up.id, t2]);
    expect(line!.counterparty_encrypted).not.toContain('01812000002');

    // The person completes the missed payment through the one existing path.
    const verified = await adminRequest(t, 'POST', `/transactions/${claimed.transaction.id}/verifications`, { note: 'On the bKash statement, no SMS arrived' });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    const again = await upload(s, statement, day);
    expect(again.status).toBe(201);
    expect(again.body.data.items.find((i: { trx_id: string }) => i.trx_id === t2)).toMatchObject({ category: 'matched', transaction_status: 'completed' });

    // Get, list, download.
    const got = await adminRequest(t, 'GET', `/statements/${up.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data.items.map((i: { id: number; category: string }) => [i.id, i.category])).toEqual(items.map((i: { id: number; category: string }) => [i.id, i.category]));
    const listed = await adminRequest(t, 'GET', `/statements?account_id=${s.accountId}&day=${day}`);
    expect(listed.body.data.map((u: { id: number }) => u.id)).toEqual([again.body.data.upload.id, up.id]);
    expect(listed.body.meta).toMatchObject({ total: 2, page: 1 });
    const csv = await fetch(`${t.baseUrl}/api/admin/v1/statements/${up.id}/report.csv`, { headers: { authorization: `Bearer ${t.runtime.deps.secrets.adminToken}` } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="reconciliation-.*\.csv"$/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toBe('category,trx_id,line,occurred_at,statement_amount,statement_fee,statement_balance,statement_type,statement_status,counterparty,sms_record_id,sms_amount,sms_fee,sms_time,transaction_id,transaction_status,hint_transaction_ids');
    expect(lines).toHaveLength(7);
    expect(lines.find((l) => l.includes(t2!))).toMatch(/^statement_only,/);
  });

  it('a Nagad statement and test mode: SMS of live mode do not count for a test-mode report', async () => {
    const s = await scene('Recon nagad');
    const trx = newGatewayTrxId('N');
    await forwardSms(t, s.phone, [{ sender: s.sender, body: creditWithBalance('75.00', trx, '1,075.00') }]);
    const content = readFileSync(new URL('../fixtures/statements/nagad-statement.csv', import.meta.url), 'utf8')
      .replaceAll('01711000001', s.number).replaceAll('2026-05-26', dhakaToday()).replace('72K9QX4T', trx).replace('1250.00', '75.00');
    const live = await upload(s, content);
    expect(live.status, JSON.stringify(live.body)).toBe(201);
    expect(live.body.data.upload.format).toBe('nagad');
    expect(live.body.data.upload.counts).toMatchObject({ matched: 1, statement_only: 0, sms_only: 0 });
    const test = await upload(s, content, dhakaToday(), { mode: 'test' });
    expect(test.body.data.upload.counts).toMatchObject({ matched: 0, statement_only: 1 });
  });
  it("only the account's phone speaks for it: an SMS another phone of the brand forwarded is not an sms_only finding of this account", async () => {
    const s = await scene('Recon two phones');
    const other = await pairDevice(t, { brandId: s.brandId });
    const mine = newGatewayTrxId('P');
    const theirs = newGatewayTrxId('Q');
    await forwardSms(t, s.phone, [{ sender: s.sender, body: creditWithBalance('40.00', mine, '1,040.00') }]);
    await forwardSms(t, other, [{ sender: s.sender, body: creditWithBalance('60.00', theirs, '5,060.00') }]);
    const content = `${HEADER}\n1,${newGatewayTrxId('Z')},${bdNow('dmy')},Payment,${s.number},01900000001,Merchant,,5.00,0.00,"1,035.00"\n`;
    const res = await upload(s, content);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.items.map((i: { trx_id: string; category: string }) => [i.trx_id, i.category])).toEqual([[mine, 'sms_only']]);
  });
});

describe('what is refused', () => {
  it('a PDF, unknown columns, bad rows, a future day: clear codes, nothing stored', async () => {
    const s = await scene('Recon refusals');
    const count = async () => Number((await t.sql<{ n: string }>('SELECT count(*) AS n FROM statement_uploads WHERE brand_id = $1', [s.brandId]))[0]!.n);
    const fixture = (name: string) => readFileSync(new URL(`../fixtures/statements/${name}`, import.meta.url), 'latin1');

    const pdf = await upload(s, fixture('statement.pdf'));
    expect(pdf.status).toBe(422);
    expect(pdf.body.errors[0]).toMatchObject({ code: 'STATEMENT_UNREADABLE', field: 'content' });

    const unknown = await upload(s, fixture('unknown-columns.csv'));
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].code).toBe('STATEMENT_UNKNOWN_COLUMNS');
    expect(unknown.body.error).toContain('Columns found: Date, Narration');

    const bad = await upload(s, fixture('bkash-bad-rows.csv').replaceAll('01711000001', s.number));
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string; code: string }) => [e.code, e.field])).toEqual([
      ['STATEMENT_ROWS_INVALID', 'content.line.2'],
      ['STATEMENT_ROWS_INVALID', 'content.line.3'],
      ['STATEMENT_ROWS_INVALID', 'content.line.4'],
      ['STATEMENT_ROWS_INVALID', 'content.line.6'],
    ]);
    expect(bad.body.errors[0].message).toBe('line 2, column Transacted Amount: not an amount ("12.5x")');

    const tomorrow = new Date(Date.parse(`${dhakaToday()}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const future = await upload(s, fixture('nagad-statement.csv').replaceAll('01711000001', s.number), tomorrow);
    expect(future.status).toBe(422);
    expect(future.body.errors[0]).toMatchObject({ code: 'STATEMENT_DAY_IN_FUTURE', field: 'day' });

    const notADay = await upload(s, 'x', '2026-02-30');
    expect(notADay.status).toBe(400);
    expect(notADay.body.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'day' });

    const huge = await upload(s, `${HEADER}\n${'x'.repeat(120_000)}`);
    expect(huge.status).toBe(413);
    expect(huge.body.errors[0].code).toBe('PAYLOAD_TOO_LARGE');

    expect(await count()).toBe(0);
    expect((await adminRequest(t, 'POST', '/wallet-accounts/999999999/statements', { day: dhakaToday(), content: 'x' })).body.errors[0].code).toBe('WALLET_ACCOUNT_NOT_FOUND');
    expect((await adminRequest(t, 'GET', '/statements/999999999')).body.errors[0].code).toBe('RECONCILIATION_NOT_FOUND');
  });

  it("an operator limited to one brand can neither upload for another brand's account nor read its reports", async () => {
    const mine = await scene('Recon mine');
    const theirs = await scene('Recon theirs');
    const content = readFileSync(new URL('../fixtures/statements/nagad-statement.csv', import.meta.url), 'utf8').replaceAll('2026-05-26', dhakaToday());
    const theirReport = await upload(theirs, content.replaceAll('01711000001', theirs.number));
    expect(theirReport.status).toBe(201);
    const operator = await newOperator(t, 'operator', { brandIds: [mine.brandId] });
    const s = await session(t, operator.email);

    const refused = await consoleRequest(t, s, 'POST', `/wallet-accounts/${theirs.accountId}/statements`, { day: dhakaToday(), content: content.replaceAll('01711000001', theirs.number) });
    expect(refused.status).toBe(404);
    expect(refused.body.errors[0].code).toBe('WALLET_ACCOUNT_NOT_FOUND');
    expect((await consoleRequest(t, s, 'GET', `/statements/${theirReport.body.data.upload.id}`)).body.errors[0].code).toBe('RECONCILIATION_NOT_FOUND');
    expect((await consoleRequest(t, s, 'GET', `/statements/${theirReport.body.data.upload.id}/report.csv`)).status).toBe(404);

    const own = await consoleRequest(t, s, 'POST', `/wallet-accounts/${mine.accountId}/statements`, { day: dhakaToday(), content: content.replaceAll('01711000001', mine.number) });
    expect(own.status, JSON.stringify(own.body)).toBe(201);
    const listed = await consoleRequest(t, s, 'GET', '/statements');
    expect(listed.body.data.map((u: { brand_id: number }) => u.brand_id)).toEqual([mine.brandId]);

    const viewer = await newOperator(t, 'viewer', { brandIds: [mine.brandId] });
    const vs = await session(t, viewer.email);
    expect((await consoleRequest(t, vs, 'POST', `/wallet-accounts/${mine.accountId}/statements`, { day: dhakaToday(), content })).body.errors[0].code).toBe('FORBIDDEN');
  });
});

describe('the CLI', () => {
  it('reconcile --account --day --file uploads and prints the findings; reconcile:report prints it again; a bad file is its error code', async () => {
    const s = await scene('Recon CLI');
    const dir = mkdtempSync(path.join(tmpdir(), 'recon-'));
    const file = path.join(dir, 'nagad.csv');
    writeFileSync(file, readFileSync(new URL('../fixtures/statements/nagad-statement.csv', import.meta.url), 'utf8').replaceAll('01711000001', s.number).replaceAll('2026-05-26', dhakaToday()));
    const run = await runCli(t, ['reconcile', '--account', String(s.accountId), '--day', dhakaToday(), '--file', file, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = run.json();
    expect(report.upload).toMatchObject({ wallet_account_id: s.accountId, format: 'nagad', file_name: 'nagad.csv' });
    expect(report.items.map((i: { category: string }) => i.category)).toEqual(['statement_only']);
    const text = await runCli(t, ['reconcile:report', '--id', String(report.upload.id)]);
    expect(text.stdout).toContain('statement_only');
    expect(text.stdout).toContain('72K9QX4T');
    const json = await runCli(t, ['reconcile:report', '--id', String(report.upload.id), '--json']);
    expect(json.json().items).toEqual(report.items);

    writeFileSync(file, 'Date,Narration\n26/05/26,UPI\n');
    const bad = await runCli(t, ['reconcile', '--account', String(s.accountId), '--day', dhakaToday(), '--file', file]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('STATEMENT_UNKNOWN_COLUMNS');
  });
});
