import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectOfflineDevices } from '../../server/domain/devices/presence.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { DEVICE_API, newFingerprint, newPairingCode, pairDevice } from '../support/device.ts';
import { gatewayPresets } from '../support/seed.ts';
import { startSmtpSink } from '../support/smtp-sink.ts';
import { waitFor } from '../support/wait.ts';
import { adminRequest } from './admin-support.ts';

/**
 * Names reach operators' mail boxes (alert e-mails): a line break in one must
 * not forge a line of the mail or a header. New names with control characters
 * are refused at the API; names stored before that are escaped when mailed.
 */
let t: TestContext;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;

beforeAll(async () => {
  smtp = await startSmtpSink({ user: 'alerts', pass: 'smtp-pass-4b1e' });
  t = await startTestServer({ SMTP_URL: smtp.url, ALERT_EMAIL_TO: 'ops@example.com', ALERT_EMAIL_FROM: 'paycollect@example.com' });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** The body as written (nodemailer sends long lines quoted-printable). */
const text = (qp: string) => Buffer.from(qp.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');

const FORGED = 'Till\r\nBrand: 999\r\nBcc: thief@example.com\u2028Raised at: never\u0007';

describe('a stored device name with line breaks in an alert e-mail', () => {
  it('forges no line of the body and no header; the characters show escaped', async () => {
    await detectOfflineDevices(t.runtime.deps.db);
    const d = await pairDevice(t, { name: 'Till' });
    // A name stored before the API refused control characters.
    await t.sql("UPDATE devices SET name = $1, last_seen_at = now() - interval '90 minutes' WHERE id = $2", [FORGED, d.deviceId]);
    expect((await detectOfflineDevices(t.runtime.deps.db)).wentOffline).toBe(1);

    const alerts = await waitFor(() => t.sql<{ status: string; last_error: string | null }>("SELECT status, last_error FROM alerts WHERE brand_id = $1 AND type = 'device_offline'", [d.brandId]), (r) => r[0]?.status === 'delivered');
    expect(alerts).toEqual([{ status: 'delivered', last_error: null }]);
    const [mail] = await waitFor(async () => smtp.mails.filter((m) => text(m.body).includes(d.deviceUuid)), (m) => m.length === 1);
    const body = text(mail!.body);
    const lines = body.split(/\r\n|\n|\r|\u2028/);
    expect(lines.filter((l) => l.startsWith('Brand:'))).toEqual([`Brand: ${d.brandId}`]);
    expect(lines.filter((l) => l.startsWith('Raised at:'))).toHaveLength(1);
    expect(lines.some((l) => l.startsWith('Bcc:'))).toBe(false);
    expect(body).not.toContain('\u0007');
    expect(mail!.headers).not.toMatch(/^Bcc:/im);
    expect(mail!.to).toEqual(['ops@example.com']);
    expect(mail!.subject).toBe('[Paycollect alert] Device "Till\\u000d\\u000aBrand: 999\\u000d\\u000aBcc: thief@example.com\\u2028Raised at: never\\u0007" is offline');
    expect(lines).toContain('device_name: Till\\u000d\\u000aBrand: 999\\u000d\\u000aBcc: thief@example.com\\u2028Raised at: never\\u0007');
  });
});

describe('names with control characters are refused at the API', () => {
  const expectFieldError = (res: { status: number; body: any }, field: string) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.errors).toContainEqual(expect.objectContaining({ code: 'VALIDATION_ERROR', field }));
  };

  it('device pairing: device_name; nothing is paired and the code stays usable', async () => {
    const { brandId } = await t.createBrand('Names brand');
    const code = await newPairingCode(t, brandId);
    for (const name of ['Till\nBrand: 1', 'Till\rphone', 'Till\tphone', 'Till\u2028phone', 'Till\u0085phone']) {
      const res = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code, body: { fingerprint: newFingerprint(), device_name: name, app_version: '1.0.0' } });
      expectFieldError(res, 'device_name');
    }
    expect(await t.sql('SELECT id FROM devices WHERE brand_id = $1', [brandId])).toEqual([]);
    const ok = await t.request('POST', `${DEVICE_API}/devices/pairings`, { token: code, body: { fingerprint: newFingerprint(), device_name: 'Till phone ✓', app_version: '1.0.0' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
  });

  it('brands, API keys, gateways, operators and a pasted SMS operator name', async () => {
    expectFieldError(await adminRequest(t, 'POST', '/brands', { name: 'Shop\r\nBrand: 2' }), 'name');
    const brand = (await adminRequest(t, 'POST', '/brands', { name: 'Shop' })).body.data;
    expectFieldError(await adminRequest(t, 'PATCH', `/brands/${brand.id}`, { name: 'Shop\nX' }), 'name');
    expectFieldError(await adminRequest(t, 'POST', `/brands/${brand.id}/api-keys`, { name: 'key\n' + 'x' }), 'name');
    expectFieldError(await adminRequest(t, 'POST', '/gateways', { ...gatewayPresets.bkash(), code: 'ctl', name: 'bKash\nfake' }), 'name');
    expectFieldError(await adminRequest(t, 'POST', '/operators', { email: 'ana@example.com', name: 'Ana\r\nBcc: x', role: 'viewer' }), 'name');
    expectFieldError(
      await adminRequest(t, 'POST', '/sms-records', { device_id: 1, sender: 'bKash', body: 'x', received_at: new Date().toISOString(), operator_name: 'Ana\nB' }),
      'operator_name',
    );
    expect(await t.sql("SELECT name FROM brands WHERE name LIKE 'Shop%'")).toEqual([{ name: 'Shop' }]);
  });
});
