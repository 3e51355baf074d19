import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ownpayBody, ownpayHeaders, ownpayEventName } from '../../server/domain/webhooks/ownpay-format.ts';
import { withQueryParam } from '../../server/domain/payments/redirect.ts';
import { ownpayAmountSchema } from '../../contract/ownpay/index.ts';

const stored = JSON.stringify({
  id: 'evt_1',
  event: 'payment.canceled',
  created_at: '2026-06-15T10:30:00.000Z',
  livemode: true,
  data: { payment_id: 'p-1', trx_id: null, amount: '500.00', currency: 'BDT', requested_amount: '5.00', requested_currency: 'USD', status: 'canceled', reference: 'R1', metadata: { a: 1 } },
});

describe('OwnPay delivery format', () => {
  it('is derived from the stored event alone (same bytes every time), in OwnPay\'s spelling, with the intent amount', () => {
    const body = ownpayBody(stored);
    expect(ownpayBody(stored)).toBe(body);
    const parsed = JSON.parse(body);
    expect(parsed).toMatchObject({ event: 'payment.cancelled', timestamp: 1781519400 });
    expect(parsed.data).toMatchObject({ status: 'cancelled', amount: '5.00', currency: 'USD', charged_amount: '500.00', charged_currency: 'BDT', id: 'p-1', payment_id: 'p-1', reference: 'R1', metadata: { a: 1 }, event_id: 'evt_1' });
  });

  it('signs the raw body alone', () => {
    const h = ownpayHeaders('whsec_x', '{"a":1}', 'payment.completed', 1700000000);
    const hex = createHmac('sha256', 'whsec_x').update('{"a":1}').digest('hex');
    expect(h).toEqual({
      'x-signature': `sha256=${hex}`,
      'x-ownpay-signature': hex,
      'x-timestamp': '1700000000',
      'x-ownpay-timestamp': '1700000000',
      'x-event': 'payment.completed',
      'x-ownpay-event': 'payment.completed',
    });
  });

  it.each([
    ['payment.canceled', 'payment.cancelled'],
    ['payment.completed', 'payment.completed'],
    ['refund.failed', 'refund.failed'],
  ])('%s is %s', (ours, theirs) => expect(ownpayEventName(ours)).toBe(theirs));
});

describe('withQueryParam', () => {
  it.each([
    ['https://a.example/x', 'https://a.example/x?status=completed'],
    ['https://a.example/x?', 'https://a.example/x?status=completed'],
    ['https://a.example/x?k=%20v', 'https://a.example/x?k=%20v&status=completed'],
    ['https://a.example/x?status=old&k=1', 'https://a.example/x?k=1&status=completed'],
    ['https://a.example/x?k=1#frag', 'https://a.example/x?k=1&status=completed#frag'],
  ])('%s → %s', (url, out) => expect(withQueryParam(url, 'status', 'completed')).toBe(out));
});

describe('OwnPay amounts', () => {
  it.each([
    ['500', '500.00'],
    ['500.5', '500.50'],
    [' 500.25 ', '500.25'],
    [0.1, '0.10'],
    ['007', '7.00'],
  ])('%j is %s', (input, out) => expect(ownpayAmountSchema.parse(input)).toBe(out));

  it.each([['500.555'], [-1], ['0'], ['1e3'], [1e21], ['.5'], [''], [null]])('%j is refused', (input) => expect(ownpayAmountSchema.safeParse(input).success).toBe(false));
});
