import { describe, expect, it } from 'vitest';
import { renderReceipt, type ReceiptContent } from '../../server/domain/receipts/mail.ts';

const base: ReceiptContent = {
  kind: 'payment', test: false, brandName: 'Corner Shop', timeZone: 'Asia/Dhaka', amount: '1250000.50', currency: 'BDT', trxId: 'TRX1', gatewayTrxId: null,
  gateway: null, reference: null, at: new Date('2026-11-28T08:32:00Z'), paymentUrl: null,
};

describe('renderReceipt', () => {
  it('groups the amount, dates it in the brand\'s zone and leaves out what is unknown', () => {
    const { subject, text } = renderReceipt(base);
    expect(subject).toBe('Receipt from Corner Shop: 1,250,000.50 BDT');
    expect(text).toContain('Date: 28 Nov 2026, 14:32 (UTC+06:00 Asia/Dhaka)');
    expect(text).not.toMatch(/Wallet transaction ID|Order reference|Paid with|Your payment:/);
  });
  it('escapes control characters so a reference cannot forge a line or a header', () => {
    const { subject, text } = renderReceipt({ ...base, brandName: 'Shop\r\nBcc: x@example.com', reference: 'A\nAmount: 0.01 BDT' });
    expect(subject).not.toMatch(/[\r\n]/);
    expect(text).not.toMatch(/^Amount: 0\.01/m);
    expect(text).not.toMatch(/^Bcc:/m);
  });
  it('a test-mode refund says both', () => {
    const { subject, text } = renderReceipt({ ...base, kind: 'refund', test: true, amount: '10.00' });
    expect(subject).toBe('[TEST] Refund from Corner Shop: 10.00 BDT');
    expect(text).toContain('Your refund of 10.00 BDT was completed.');
    expect(text).toContain('This is a TEST receipt');
  });
});
