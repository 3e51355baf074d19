import { describe, expect, it } from 'vitest';
import type { CheckoutPayment, CheckoutTransaction } from '../../contract/checkout/payments.ts';
import { renderCheckoutPage } from '../../server/http/checkout-pages/page.ts';

/** The "Wrong transaction ID? Change it" affordance on the waiting page, from the view alone. */

function transaction(over: Partial<CheckoutTransaction>): CheckoutTransaction {
  return {
    trx_id: 'TRX0123456789ABCDEF',
    gateway: 'bkash',
    gateway_name: 'bKash <Personal>',
    gateway_type: 'manual',
    method: 'send_money',
    status: 'awaiting_verification',
    amount: '500.00',
    currency: 'BDT',
    fee: '0.00',
    amount_to_send: '500.00',
    gateway_trx_id: 'WRONG00001',
    failure_reason: null,
    created_at: '2026-11-24T10:00:00.000Z',
    completed_at: null,
    redirect_url: null,
    gateway_trx_id_changes_left: 3,
    phone_check_until: null,
    ...over,
  };
}

function page(t: CheckoutTransaction): string {
  const p: CheckoutPayment = {
    payment_id: '6f1d8c3e-8f7a-4a5b-9c2d-1e2f3a4b5c6d',
    brand: { name: 'Shop', logo_url: null, primary_color: null, button_text_color: '#ffffff', support_phone: null, support_email: null },
    amount: '500.00',
    currency: 'BDT',
    reference: null,
    status: t.status,
    payable: false,
    expires_at: '2026-11-24T11:00:00.000Z',
    gateways: [],
    transaction: t,
    redirect_url: null,
    not_payable_reason: null,
  };
  return renderCheckoutPage(p, { lang: 'en', cancelUrl: null, timeZone: 'Asia/Dhaka' });
}

describe('the replace form on the waiting page', () => {
  it.each([
    [3, 'You can change it 3 more times.'],
    [1, 'You can change it one more time.'],
  ])('is offered with %i changes left', (left, says) => {
    const html = page(transaction({ gateway_trx_id_changes_left: left }));
    expect(html).toContain('<summary>Wrong transaction ID? Change it</summary>');
    expect(html).toContain('class="replace-form"');
    expect(html).toContain(says);
    // Names come from the merchant's configuration: escaped like everything else.
    expect(html).toContain('Correct transaction ID from bKash &lt;Personal&gt;');
    expect(html).not.toContain('<Personal>');
  });

  it('says to contact the shop once no change is left', () => {
    const html = page(transaction({ gateway_trx_id_changes_left: 0 }));
    expect(html).not.toContain('replace-form');
    expect(html).toContain('It can no longer be changed here; please contact the shop.');
  });

  it('is absent when the id cannot be replaced (null)', () => {
    const html = page(transaction({ status: 'processing', gateway_type: 'automatic', gateway_trx_id: null, gateway_trx_id_changes_left: null }));
    expect(html).not.toContain('Wrong transaction ID');
  });
});
