import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseStatement, statementAmount, statementTime } from '../../server/domain/reconciliation/statement-parser.ts';
import { REPORT_CSV_COLUMNS, reportCsv } from '../../server/domain/reconciliation/service.ts';

/** Statement exports with the column headings of the real formats (docs/reconciliation.md, "Formats"). */
const fixture = (name: string) => readFileSync(new URL(`../fixtures/statements/${name}`, import.meta.url), 'latin1');
const ACCOUNT = '01711000001';

describe('bKash statement', () => {
  it('reads every row after the preamble, direction from which side is the account, exact amounts, Dhaka times', () => {
    const r = parseStatement(fixture('bkash-statement.csv'), ACCOUNT);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.format).toBe('bkash');
    expect(r.badRows).toEqual([]);
    expect(r.rows).toEqual([
      {
        line: 4, trxId: 'DEU7A1B2C3', direction: 'in', counterparty: '01812345678', amount: '6400.00', fee: '0.00', balance: '20288.41',
        type: 'Send Money', status: null, occurredAt: new Date('2026-05-26T04:58:00Z'),
      },
      {
        line: 5, trxId: 'DEU7A1B2C4', direction: 'out', counterparty: '01900000001', amount: '20.00', fee: '0.00', balance: '20268.41',
        type: 'Payment', status: null, occurredAt: new Date('2026-05-26T09:07:00Z'),
      },
      {
        line: 6, trxId: 'DEU7A1B2C5', direction: 'in', counterparty: '01555000111', amount: '500.00', fee: '0.00', balance: '20768.41',
        type: 'Cash In', status: null, occurredAt: new Date('2026-05-26T13:15:30Z'),
      },
    ]);
  });

  it('the account written in international form is still the account', () => {
    const r = parseStatement(fixture('bkash-statement.csv'), '+880 1711-000001');
    expect(r.ok && r.rows.map((x) => x.direction)).toEqual(['in', 'out', 'in']);
  });

  it('reports each bad row with its line and column, and guesses nothing', () => {
    const r = parseStatement(fixture('bkash-bad-rows.csv'), ACCOUNT);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.badRows).toEqual([
      { line: 2, column: 'Transacted Amount', reason: 'not an amount ("12.5x")' },
      { line: 3, column: 'Transaction Date', reason: 'not a date and time this service reads ("05/31/2026 10:58")' },
      { line: 4, column: null, reason: "neither the sender nor the receiver is this account's number: a statement of another account?" },
      { line: 6, column: 'Trx Id', reason: 'the same transaction id as line 5' },
    ]);
    expect(r.rows.map((x) => x.line)).toEqual([5]);
  });
});

describe('Nagad statement', () => {
  it('reads credit and debit rows, counterparty from TXN_WITH_ACC, balance, status, no fee column', () => {
    const r = parseStatement(fixture('nagad-statement.csv'), ACCOUNT);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.format).toBe('nagad');
    expect(r.rows).toEqual([
      {
        line: 2, trxId: '72K9QX4T', direction: 'in', counterparty: '01999888777', amount: '1250.00', fee: null, balance: '3250.00',
        type: 'Send Money', status: 'Success', occurredAt: new Date('2026-05-26T03:12:45Z'),
      },
      {
        line: 3, trxId: '72K9QX5U', direction: 'out', counterparty: '01888000999', amount: '500.00', fee: null, balance: '2750.00',
        type: 'Cash Out', status: 'Success', occurredAt: new Date('2026-05-26T05:40:02Z'),
      },
    ]);
  });

  it("refuses the rows of another account's statement", () => {
    const r = parseStatement(fixture('nagad-statement.csv'), '01999000000');
    expect(r.ok && r.rows).toEqual([]);
    expect(r.ok && r.badRows.map((b) => [b.line, b.column])).toEqual([[2, 'STATEMENT_FOR_ACC'], [3, 'STATEMENT_FOR_ACC']]);
  });

  it('reads the D/C spelling of the direction column', () => {
    const text = 'SL,TXN_DATE_TIME,TXN_ID,TXN_TYPE_D_C,TXN_AMT\n1,26/05/2026 09:00:00,ABC12345,C,10\n2,26/05/2026 09:01:00,ABC12346,X,10\n';
    const r = parseStatement(text, ACCOUNT);
    expect(r.ok && r.rows.map((x) => [x.trxId, x.direction])).toEqual([['ABC12345', 'in']]);
    expect(r.ok && r.badRows).toEqual([{ line: 3, column: 'TXN_TYPE_D_C', reason: 'neither credit (C…) nor debit (D…)' }]);
  });
});

describe('generic layout', () => {
  it('reads tab-separated text with in/out and an explicit offset', () => {
    const r = parseStatement(fixture('generic-statement.tsv'), ACCOUNT);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.format).toBe('generic');
    expect(r.rows.map((x) => [x.trxId, x.direction, x.amount, x.fee, x.occurredAt.toISOString()])).toEqual([
      ['RKT123456', 'in', '300.00', '0.00', '2026-05-26T06:00:00.000Z'],
      ['RKT123457', 'out', '100.00', '5.00', '2026-05-26T17:59:59.000Z'],
    ]);
  });
});

describe('files that are not a statement', () => {
  it('a PDF is unreadable', () => {
    expect(parseStatement(fixture('statement.pdf'), ACCOUNT)).toMatchObject({ ok: false, problem: 'unreadable' });
  });

  it("a bank's CSV is unknown columns, naming the headings found", () => {
    expect(parseStatement(fixture('unknown-columns.csv'), ACCOUNT)).toMatchObject({
      ok: false, problem: 'unknown_columns', headings: ['Date', 'Narration', 'Chq./Ref.No.', 'Withdrawal Amt.', 'Deposit Amt.', 'Closing Balance'],
    });
  });

  it('an empty file, or headings only, is empty', () => {
    expect(parseStatement('', ACCOUNT)).toMatchObject({ ok: false, problem: 'empty' });
    expect(parseStatement('date_time,trx_id,direction,amount\n', ACCOUNT)).toMatchObject({ ok: false, problem: 'empty' });
  });

  it('a broken quote is unreadable', () => {
    expect(parseStatement('date_time,trx_id,direction,amount\n"2026-05-26 10:00,ABC123456,in,10\n', ACCOUNT)).toMatchObject({ ok: false, problem: 'unreadable' });
  });
});

describe('amounts and times', () => {
  it.each([
    ['1,250.5', '1250.50'], ['Tk 6,400.00', '6400.00'], ['৳১২৫০', '1250.00'], ['0.00', '0.00'], ['007', '7.00'], ['1,00,000.00', '100000.00'],
  ])('%s is %s', (raw, want) => expect(statementAmount(raw)).toBe(want));

  it.each(['-5.00', '1.234', '1e3', '12.5x', '', '1,2', '1234567890123.00'])('%s is not an amount', (raw) => expect(statementAmount(raw)).toBeNull());

  it.each([
    ['2026-05-26 10:58', '2026-05-26T04:58:00.000Z'],
    ['2026-05-26T10:58:30Z', '2026-05-26T10:58:30.000Z'],
    ['26/05/2026 10:58', '2026-05-26T04:58:00.000Z'],
    ['26-May-26 12:05:00 AM', '2026-05-25T18:05:00.000Z'],
    ['26 May 2026 12:05 PM', '2026-05-26T06:05:00.000Z'],
  ])('%s is %s', (raw, want) => expect(statementTime(raw)?.toISOString()).toBe(want));

  it.each(['31/02/2026 10:00', '05/31/2026 10:00', '26/05/2026', '26-Foo-26 10:00', '2026-05-26 24:00', '26/05/2026 13:00 PM'])('%s is refused', (raw) =>
    expect(statementTime(raw)).toBeNull());
});

describe('the report as CSV', () => {
  it('quotes by RFC 4180 and defuses cells a spreadsheet would run as formulas', () => {
    const item = {
      id: 1, category: 'statement_only' as const, trxId: 'ABC123456', line: 4, occurredAt: new Date('2026-05-26T04:58:00Z'), statementAmount: '10.00', statementFee: null,
      statementBalance: '1,5', statementType: '=HYPERLINK("http://x")', statementStatus: '@SUM(A1)', counterparty: '+8801712345678', smsRecordId: null, smsAmount: null,
      smsFee: null, smsTime: null, smsStatus: null, transactionId: null, transactionStatus: null, hintTransactionIds: [7, 9],
    };
    const csv = reportCsv({ upload: {} as never, items: [item] });
    const [head, row] = csv.split('\r\n');
    expect(head).toBe(REPORT_CSV_COLUMNS.join(','));
    expect(row).toBe(`statement_only,ABC123456,4,2026-05-26T04:58:00.000Z,10.00,,"1,5","'=HYPERLINK(""http://x"")",'@SUM(A1),'+8801712345678,,,,,,,7 9`);
  });
});
