import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, officialSender, smsBodies, smsScene } from '../support/sms-matching.ts';
import { runFormatAlarm } from '../../server/domain/sms/templates/format-alarm.ts';
import { adminRequest } from './admin-support.ts';

/** The format-change alarm: raised once per episode with a gateway.sms_unparsed event, cleared on recovery. */

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const run = () => runFormatAlarm(t.runtime.deps.db, t.runtime.deps.crypto.pii);
const changedWording = (amount: string) => `Cash In Tk ${amount} from 01712345678 received. TrxID ${newGatewayTrxId()}. Thank you.`;
const events = (brandId: number) => t.sql<{ event: string; payload: string }>("SELECT event, payload FROM webhook_events WHERE brand_id = $1 AND event = 'gateway.sms_unparsed' ORDER BY id", [brandId]);

describe('format-change alarm', () => {
  it('raises one alarm and one gateway.sms_unparsed event per episode, and clears it when messages parse again', async () => {
    const scene = await smsScene(t);
    const quiet = await smsScene(t);
    const msgs = Array.from({ length: 5 }, (_, i) => ({ sender: officialSender.bkash, body: changedWording(`${100 + i}.00`) }));
    expect((await forwardSms(t, scene.device, msgs)).map((m) => m.match_status)).toEqual(Array(5).fill('no_match'));
    // Below the minimum count: no alarm for this brand.
    await forwardSms(t, quiet.device, msgs.slice(0, 2));

    expect((await run()).raised).toBeGreaterThanOrEqual(1);
    const listed = await adminRequest(t, 'GET', `/sms-format-alarms?brand_id=${scene.brandId}&open=true`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([expect.objectContaining({ brand_id: scene.brandId, mode: 'live', sender: 'bKash', unparsed: 5, total: 5, share: '1.0000', baseline_share: '0.0000', cleared_at: null })]);
    expect((await adminRequest(t, 'GET', `/sms-format-alarms?brand_id=${quiet.brandId}`)).body.data).toEqual([]);

    const [event] = await events(scene.brandId);
    expect(JSON.parse(event!.payload)).toMatchObject({ event: 'gateway.sms_unparsed', livemode: true, data: { alarm_id: listed.body.data[0].id, sender: 'bKash', unparsed: 5, total: 5 } });
    // The payload names counts, never a message text.
    expect(event!.payload).not.toContain('Cash In');
    // The operators' alert of the episode, with no message text in it.
    const alerts = await t.sql<{ type: string; subject: string; details: unknown }>("SELECT type, subject, details FROM alerts WHERE brand_id = $1 AND type = 'sms_format_alarm'", [scene.brandId]);
    expect(alerts).toHaveLength(1);
    expect(JSON.stringify(alerts[0])).not.toContain('Cash In');

    // Once per episode: another run raises nothing new.
    await run();
    expect(await events(scene.brandId)).toHaveLength(1);
    expect(await t.sql("SELECT id FROM alerts WHERE brand_id = $1 AND type = 'sms_format_alarm'", [scene.brandId])).toHaveLength(1);
    expect((await adminRequest(t, 'GET', `/sms-format-alarms?brand_id=${scene.brandId}`)).body.data).toHaveLength(1);

    // Messages parse again (5 unparsed of 11: below the rise): the episode clears.
    await forwardSms(t, scene.device, Array.from({ length: 6 }, (_, i) => ({ sender: officialSender.bkash, body: smsBodies.bkash(`${200 + i}.00`, newGatewayTrxId()) })));
    expect((await run()).cleared).toBeGreaterThanOrEqual(1);
    const after = await adminRequest(t, 'GET', `/sms-format-alarms?brand_id=${scene.brandId}`);
    expect(after.body.data[0].cleared_at).not.toBeNull();
    expect((await adminRequest(t, 'GET', `/sms-format-alarms?brand_id=${scene.brandId}&open=true`)).body.data).toEqual([]);
  });

  it('refuses a bad filter with a 400 naming it', async () => {
    const res = await adminRequest(t, 'GET', '/sms-format-alarms?open=maybe');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('open');
  });
});
