import { describe, expect, it } from 'vitest';
import { timeZoneSchema } from '../../contract/admin/brands.ts';
import { createGatewayBodySchema } from '../../contract/admin/gateways.ts';
import { assertAuditState } from '../../server/domain/audit/service.ts';

const base = { code: 'bkash', name: 'bKash', type: 'manual', methods: ['send_money'], currencies: ['BDT'] };

describe('gateway fields (the admin request and the gateways service take the same schema)', () => {
  it.each([
    [{}, true],
    [{ min_amount: '10.00', max_amount: '25000.00', fee_percent: '1.85', fee_fixed: '0.00' }, true],
    [{ max_amount: null }, true],
    [{ fee_percent: '99.9999' }, true],
    [{ sms_templates: [{ pattern: 'x', flags: 'i' }] }, true],
    [{ code: 'Bad Code' }, false],
    [{ code: '-x' }, false],
    [{ min_amount: '10' }, false],
    [{ min_amount: '0.00' }, false],
    [{ max_amount: '1e3' }, false],
    [{ fee_percent: '100' }, false],
    [{ fee_percent: '1.23456' }, false],
    [{ fee_fixed: '-1.00' }, false],
    [{ currencies: ['bdt'] }, false],
    [{ currencies: [] }, false],
    [{ methods: ['Send Money'] }, false],
    [{ sort_order: 1001 }, false],
    [{ sms_templates: [{ pattern: '' }] }, false],
    [{ sms_templates: [{ pattern: 'x', flags: 'imsuy' }] }, false],
    [{ extra: 1 }, false],
  ])('%j: accepted %s', (patch, ok) => {
    expect(createGatewayBodySchema.safeParse({ ...base, ...patch }).success).toBe(ok);
  });

  it('fills the defaults the service stores', () => {
    expect(createGatewayBodySchema.parse({ ...base, sms_templates: [{ pattern: 'x' }] })).toMatchObject({
      min_amount: '0.01',
      max_amount: null,
      fee_percent: '0',
      fee_fixed: '0.00',
      fee_payer: 'merchant',
      enabled: true,
      sms_senders: [],
      sms_templates: [{ pattern: 'x', flags: '', direction: 'in' }],
      sort_order: 0,
    });
  });
});

describe('brand time zones', () => {
  it.each([
    ['Asia/Dhaka', true],
    ['UTC', true],
    ['Etc/UTC', true],
    ['America/Argentina/Buenos_Aires', true],
    ['+06:00', false],
    ['-0300', false],
    ['Mars/Olympus', false],
    ['asia dhaka', false],
    ['', false],
    ['Asia/Dhaka; DROP TABLE brands', false],
  ])('%j: %s', (tz, ok) => {
    expect(timeZoneSchema.safeParse(tz).success).toBe(ok);
  });
});

describe('audit states hold ids, statuses and amounts only', () => {
  it.each([
    [{ status: 'completed', amount: '500.00', id: 12, enabled: true, reason: null }, null],
    [{ senders: ['bKash', 'NAGAD'], ids: [1, 2] }, null],
    [{ note: 'x'.repeat(201) }, 'audit after.note is too long to be an id, status or amount'],
    [{ list: ['x'.repeat(201)] }, 'audit after.list is too long to be an id, status or amount'],
    [{ customer: { name: 'Rahim' } }, 'audit after.customer must be a scalar or a list of scalars'],
    [{ nested: [{ a: 1 }] }, 'audit after.nested must be a scalar or a list of scalars'],
  ])('%j', (state, error) => {
    const check = () => assertAuditState('after', state as never);
    if (error) expect(check).toThrow(error);
    else expect(check).not.toThrow();
  });
});
