import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { officialSender, smsScene } from '../support/sms-matching.ts';
import { adminRequest } from './admin-support.ts';

/**
 * Templates whose backtracking explodes on a long body: through the admin API they
 * either are refused with a field error or run in linear time; none stalls the server.
 */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const body = `Paid ${'1'.repeat(1990)}`;

describe('SMS templates cannot stall the server', () => {
  it.each([
    String.raw`^Paid (?<amount>(?:\w|\d)*)! ref (?<trx_id>\w+)`,
    String.raw`Paid (?<amount>\d*\d*\d*)! ref (?<trx_id>\w+)`,
    String.raw`^Paid (?<amount>(a+)+$|\d+)! ref (?<trx_id>\w+)`,
    String.raw`(?<amount>(1+)+)$(?<trx_id>\w+)`,
  ])('%s is evaluated on a long adversarial sample in bounded time', async (pattern) => {
    const scene = await smsScene(t);
    const started = performance.now();
    const res = await adminRequest(t, 'POST', `/gateways/${scene.gateway.code}/template-evaluations`, {
      sms_templates: [{ pattern }],
      days: 1,
      samples: [{ sender: officialSender.bkash, body }, { sender: officialSender.bkash, body: `${'a'.repeat(1990)}!` }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.samples[0].proposed).toBeNull();
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('a pattern the linear-time engine cannot run is refused with a field error, on evaluation and on save', async () => {
    const scene = await smsScene(t);
    const pattern = String.raw`^Paid (?<amount>\d+)(?!\d) ref (?<trx_id>\w+)`;
    const evaluated = await adminRequest(t, 'POST', `/gateways/${scene.gateway.code}/template-evaluations`, { sms_templates: [{ pattern }] });
    expect(evaluated.status).toBe(422);
    expect(evaluated.body.errors).toEqual([expect.objectContaining({ code: 'INVALID_SMS_TEMPLATE', field: 'sms_templates.0.pattern', message: expect.stringContaining('linear-time engine') })]);
    const saved = await adminRequest(t, 'PATCH', `/gateways/${scene.gateway.code}`, { sms_templates: [{ pattern }] });
    expect(saved.status).toBe(422);
    expect(saved.body.errors).toEqual([expect.objectContaining({ code: 'INVALID_SMS_TEMPLATE', field: 'sms_templates.0.pattern' })]);
  });
});
