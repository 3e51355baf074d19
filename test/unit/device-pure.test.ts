import { describe, expect, it } from 'vitest';
import { effectiveTimeZone, headlineCurrency } from '../../server/domain/devices/dashboard.ts';
import { decideReport, type OutboundSmsReport } from '../../server/domain/outbound-sms/transitions.ts';
import type { OutboundSmsStatus } from '../../server/domain/outbound-sms/entities.ts';
import { smsContentHash } from '../../server/domain/sms/intake/content-hash.ts';

describe('outbound SMS reports', () => {
  const table: Array<[OutboundSmsStatus, OutboundSmsReport, ReturnType<typeof decideReport>]> = [
    ['leased', 'sent', 'apply'],
    ['leased', 'failed', 'apply'],
    ['leased', 'delivered', 'apply'],
    ['pending', 'sent', 'apply'],
    ['expired', 'sent', 'apply'],
    ['sent', 'sent', 'repeat'],
    ['sent', 'delivered', 'apply'],
    ['sent', 'failed', 'conflict'],
    ['delivered', 'delivered', 'repeat'],
    ['delivered', 'sent', 'repeat'],
    ['delivered', 'failed', 'conflict'],
    ['failed', 'failed', 'repeat'],
    ['failed', 'sent', 'conflict'],
    ['failed', 'delivered', 'conflict'],
    ['expired', 'delivered', 'apply'],
  ];
  it.each(table)('%s + %s -> %s', (current, report, expected) => {
    expect(decideReport(current, report)).toBe(expected);
  });
});

describe('SMS content hash', () => {
  const key = Buffer.alloc(32, 7);
  const body = 'Money Received.\nAmount: Tk 500.00\nTxnID: 71A2B3C4';

  it('ignores sender case and spacing, line-break style and surrounding whitespace', () => {
    const h = smsContentHash(key, 1, 'NAGAD', body);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(smsContentHash(key, 1, 'Nagad ', `  ${body.replaceAll('\n', '\r\n')}\n`)).toBe(h);
    expect(smsContentHash(key, 1, 'NAGAD', body.normalize('NFD'))).toBe(h);
  });

  it('differs between brands: the same SMS in two brands cannot be linked in a dump', () => {
    expect(smsContentHash(key, 2, 'NAGAD', body)).not.toBe(smsContentHash(key, 1, 'NAGAD', body));
    expect(smsContentHash(key, 12, 'NAGAD', body)).not.toBe(smsContentHash(key, 1, '2NAGAD', body));
  });

  it('differs for other text, another sender or another key', () => {
    const h = smsContentHash(key, 1, 'NAGAD', body);
    expect(smsContentHash(key, 1, 'NAGAD', body.replace('500.00', '500.01'))).not.toBe(h);
    expect(smsContentHash(key, 1, 'bKash', body)).not.toBe(h);
    expect(smsContentHash(Buffer.alloc(32, 8), 1, 'NAGAD', body)).not.toBe(h);
  });
});

describe('dashboard helpers', () => {
  it('picks the most used currency, alphabetical on ties, null when none', () => {
    expect(headlineCurrency([])).toBeNull();
    expect(headlineCurrency([{ currency: 'USD', count: 1 }, { currency: 'BDT', count: 3 }])).toBe('BDT');
    expect(headlineCurrency([{ currency: 'USD', count: 2 }, { currency: 'BDT', count: 2 }])).toBe('BDT');
  });

  it('keeps a real time zone and falls back to UTC otherwise', () => {
    expect(effectiveTimeZone('Asia/Dhaka')).toBe('Asia/Dhaka');
    expect(effectiveTimeZone('Mars/Base')).toBe('UTC');
    expect(effectiveTimeZone('')).toBe('UTC');
    expect(effectiveTimeZone(null)).toBe('UTC');
  });
});
