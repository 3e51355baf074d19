import { describe, expect, it } from 'vitest';
import { toPaymentResource } from '../../server/domain/payments/view.ts';
import type { PaymentRow } from '../../server/domain/payments/queries/payments.ts';

const intentRow: PaymentRow = {
  intent_id: 7,
  payment_id: '0b7c2f0e-1111-4222-8333-944455556666',
  brand_id: 1,
  intent_amount: '10.00',
  intent_currency: 'USD',
  reference: 'o-1',
  metadata: { a: 1 },
  intent_status: 'pending',
  expires_at: new Date('2026-01-01T12:00:00Z'),
  intent_created_at: new Date('2026-01-01T11:00:00.123Z'),
  customer_id: null,
  transaction_id: null,
  trx_id: null,
  gateway_trx_id: null,
  amount: null,
  currency: null,
  fee: null,
  exchange_rate: null,
  status: null,
  gateway_code: null,
  method: null,
  failure_reason: null,
  created_at: null,
  completed_at: null,
};

describe('toPaymentResource', () => {
  it('intent form: transaction fields null, intent amount, pending before expiry', () => {
    const r = toPaymentResource(intentRow, null, new Date('2026-01-01T11:59:59.999Z'));
    expect(r).toMatchObject({
      object: 'payment_intent',
      id: 7,
      transaction_id: null,
      trx_id: null,
      gateway_trx_id: null,
      gateway: null,
      method: null,
      fee: null,
      completed_at: null,
      amount: '10.00',
      currency: 'USD',
      status: 'pending',
      created_at: '2026-01-01T11:00:00.123Z',
      expires_at: '2026-01-01T12:00:00.000Z',
    });
  });

  it('intent form: expired from its expiry time on, whatever the stored status', () => {
    expect(toPaymentResource(intentRow, null, new Date('2026-01-01T12:00:00.000Z')).status).toBe('expired');
    expect(toPaymentResource({ ...intentRow, intent_status: 'expired' }, null, new Date('2025-01-01T00:00:00Z')).status).toBe('expired');
  });

  it('transaction form: the transaction amount, currency and status; the rate without padding', () => {
    const r = toPaymentResource(
      {
        ...intentRow,
        transaction_id: 42,
        trx_id: 'TRX00000000000000AB',
        gateway_trx_id: 'BFC2',
        amount: '1105.00',
        currency: 'BDT',
        fee: '20.44',
        exchange_rate: '110.5000000000',
        status: 'completed',
        gateway_code: 'bkash',
        method: 'send_money',
        created_at: new Date('2026-01-01T11:10:00Z'),
        completed_at: new Date('2026-01-01T11:20:00Z'),
      },
      { name: 'N', email: null },
      new Date('2030-01-01T00:00:00Z'),
    );
    expect(r).toMatchObject({
      object: 'transaction',
      id: 42,
      transaction_id: 42,
      amount: '1105.00',
      currency: 'BDT',
      requested_amount: '10.00',
      requested_currency: 'USD',
      exchange_rate: '110.5',
      status: 'completed',
      completed_at: '2026-01-01T11:20:00.000Z',
      customer: { name: 'N', email: null },
    });
  });
});
