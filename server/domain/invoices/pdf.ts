import { createRequire } from 'node:module';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { currencyLabel, formatAmountIn, formatDayIn, formatQuantityIn } from '../display.ts';
import { translator, type InvoiceLanguage } from './catalog.ts';
import { amountRemaining, invoiceNumber } from './totals.ts';
import type { InvoiceRow } from './queries.ts';

/**
 * The invoice as a PDF (pdfkit). Merchant and customer text may be Bangla, so
 * two fonts of the Noto Sans Bengali family are embedded: its Bengali subset
 * (shaped by fontkit's OpenType layout, so conjuncts and vowel signs join) and
 * its Latin subset; each run of text is set in the font of its script.
 */

const fontDir = path.join(path.dirname(createRequire(import.meta.url).resolve('@fontsource/noto-sans-bengali/package.json')), 'files');
const FONTS = {
  latin: path.join(fontDir, 'noto-sans-bengali-latin-400-normal.woff'),
  latinBold: path.join(fontDir, 'noto-sans-bengali-latin-700-normal.woff'),
  bengali: path.join(fontDir, 'noto-sans-bengali-bengali-400-normal.woff'),
  bengaliBold: path.join(fontDir, 'noto-sans-bengali-bengali-700-normal.woff'),
} as const;

/** Bengali block, the dandas, and the joiners that shape between its letters. */
const BENGALI = /[\u0980-\u09FF\u0964\u0965\u200C\u200D]/u;

/** `text` cut into runs of one script: Bengali, or anything else (Latin, digits, spaces, punctuation). */
export function scriptRuns(text: string): Array<{ bengali: boolean; text: string }> {
  const runs: Array<{ bengali: boolean; text: string }> = [];
  for (const ch of text) {
    // A space between Bengali words stays in the Bengali run (that subset has it); punctuation is set in the Latin one, which has it.
    const bengali = BENGALI.test(ch) || (ch === ' ' && runs.length > 0 && runs[runs.length - 1]!.bengali);
    const last = runs[runs.length - 1];
    if (last && last.bengali === bengali) last.text += ch;
    else runs.push({ bengali, text: ch });
  }
  return runs;
}

type Doc = InstanceType<typeof PDFDocument>;

function write(doc: Doc, text: string, at: { x: number; y: number; width: number; align?: 'left' | 'right'; bold?: boolean; size?: number }): void {
  const runs = scriptRuns(text || ' ');
  doc.fontSize(at.size ?? 10);
  runs.forEach((run, i) => {
    doc.font(run.bengali ? (at.bold ? 'bengaliBold' : 'bengali') : at.bold ? 'latinBold' : 'latin');
    const opts = { width: at.width, align: at.align ?? 'left', continued: i < runs.length - 1, lineBreak: true } as const;
    if (i === 0) doc.text(run.text, at.x, at.y, opts);
    else doc.text(run.text, opts);
  });
}

export interface InvoicePdfInput {
  row: InvoiceRow;
  customerName: string | null;
  lang?: InvoiceLanguage;
  /** Uncompressed content streams (tests read the text operators). */
  compress?: boolean;
}

/** The PDF's bytes. */
export async function renderInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  const { row: r } = input;
  const lang = input.lang ?? 'en';
  const t = translator(lang);
  const doc = new PDFDocument({ size: 'A4', margin: 50, compress: input.compress ?? true, info: { Title: `${invoiceNumber(r.number)} ${r.brand_name}`, Producer: 'paycollect' } });
  for (const [name, file] of Object.entries(FONTS)) doc.registerFont(name, file);
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = 50;
  const right = 545;
  const money = (v: string) => `${formatAmountIn(lang, v)} ${currencyLabel(lang, r.currency)}`;
  write(doc, r.brand_name, { x: left, y: 50, width: 300, bold: true, size: 18 });
  write(doc, t('invoice'), { x: 350, y: 50, width: right - 350, align: 'right', bold: true, size: 18 });
  if (r.mode === 'test') write(doc, t('testBanner'), { x: left, y: 78, width: right - left, size: 9 });

  let y = 100;
  const meta: Array<[string, string]> = [
    [t('number'), invoiceNumber(r.number)],
    [t('dueDate'), formatDayIn(lang, r.due_day)],
    [t('status'), t(`status.${r.status}`)],
    [t('billedTo'), input.customerName ?? ''],
  ];
  for (const [k, v] of meta) {
    write(doc, k, { x: left, y, width: 150, bold: true });
    write(doc, v, { x: left + 150, y, width: right - left - 150 });
    y += 18;
  }

  y += 16;
  const cols = { desc: left, qty: 300, unit: 360, amount: 450 };
  write(doc, t('description'), { x: cols.desc, y, width: 240, bold: true });
  write(doc, t('quantity'), { x: cols.qty, y, width: 50, align: 'right', bold: true });
  write(doc, t('unitPrice'), { x: cols.unit, y, width: 80, align: 'right', bold: true });
  write(doc, t('amount'), { x: cols.amount, y, width: right - cols.amount, align: 'right', bold: true });
  y += 20;
  doc.moveTo(left, y - 4).lineTo(right, y - 4).stroke();
  for (const line of r.lines) {
    const top = y;
    write(doc, line.description, { x: cols.desc, y: top, width: 240 });
    const after = doc.y;
    write(doc, formatQuantityIn(lang, line.quantity), { x: cols.qty, y: top, width: 50, align: 'right' });
    write(doc, formatAmountIn(lang, line.unit_price), { x: cols.unit, y: top, width: 80, align: 'right' });
    write(doc, formatAmountIn(lang, line.amount), { x: cols.amount, y: top, width: right - cols.amount, align: 'right' });
    y = Math.max(after, top + 14) + 6;
    if (y > 720) {
      doc.addPage();
      y = 50;
    }
  }
  doc.moveTo(left, y).lineTo(right, y).stroke();
  y += 10;

  const sums: Array<[string, string, boolean]> = [[t('subtotal'), money(r.subtotal), false]];
  if (r.discount) sums.push([r.discount.description, `-${money(r.discount.amount)}`, false]);
  if (r.tax) sums.push([`${r.tax.description}${r.tax.rate ? ` (${formatQuantityIn(lang, r.tax.rate)}%)` : ''}`, money(r.tax.amount), false]);
  sums.push([t('total'), money(r.total), true], [t('amountPaid'), money(r.amount_paid), false], [t('amountRemaining'), money(amountRemaining(r.total, r.amount_paid)), true]);
  for (const [k, v, bold] of sums) {
    write(doc, k, { x: 300, y, width: 140, bold });
    write(doc, v, { x: cols.amount - 40, y, width: right - cols.amount + 40, align: 'right', bold });
    y += 18;
  }
  if (r.memo) {
    y += 16;
    write(doc, t('memo'), { x: left, y, width: right - left, bold: true });
    write(doc, r.memo, { x: left, y: y + 16, width: right - left });
  }
  doc.end();
  return done;
}
