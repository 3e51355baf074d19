import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../scripts/device-sim.ts';
import { newPairingCode } from '../support/device.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { seedGateway } from '../support/seed.ts';
import { creditTemplate, creditWithBalance, eventsOf, newGatewayTrxId, seedPayment, transactionRow, type SmsScene } from '../support/sms-matching.ts';

/**
 * The self-repair loop, end to end through the device simulator (which uses
 * only the device SDK): the phone misses an SMS, the balance chain breaks on
 * the next one, the service asks for the gap, the phone re-sends it from its
 * inbox, and the stuck payment completes without a person. The wall time from
 * the break to the completion is printed, not asserted: how fast is for bench/.
 */
let t: TestContext;
let dir: string;
let state: string;

beforeAll(async () => {
  t = await startTestServer();
  dir = mkdtempSync(path.join(os.tmpdir(), 'self-repair-'));
  state = path.join(dir, 'state.json');
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sim(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...argv, '--state', state, '--json'], { out: (l) => out.push(l), err: (l) => err.push(l) });
  expect(code, err.join('\n')).toBe(0);
  return JSON.parse(out.join('\n'));
}

function smsFile(name: string, messages: Array<{ sender: string; body: string; received_at: string; device_message_id: string }>): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(messages));
  return file;
}

describe('self-repair: a missed SMS comes back by itself', () => {
  it('miss, chain break, backfill request, re-send through the SDK, payment completed without a human', async () => {
    const { brandId, apiKey } = await t.createBrand('Self Repair Brand');
    const gateway = await seedGateway(t, 'bkash', { sms_templates: [creditTemplate] });
    expect(await sim('pair', '--code', await newPairingCode(t, brandId), '--base-url', t.baseUrl, '--name', 'Shop phone')).toBeTruthy();
    const scene = { brandId, apiKey, gateway } as unknown as SmsScene;

    const stuckTrx = newGatewayTrxId();
    const nextTrx = newGatewayTrxId();
    const stuck = await seedPayment(t, scene, { amount: '500.00', status: 'awaiting_verification', gatewayTrxId: stuckTrx, senderNumber: '01712345515' });
    await seedPayment(t, scene, { amount: '300.00', status: 'awaiting_verification', gatewayTrxId: nextTrx, senderNumber: '01712345515' });
    const t0 = Date.now() - 90_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();

    // An earlier SMS: the chain's first link.
    await sim('sms', '--file', smsFile('a.json', [{ sender: 'bKash', body: creditWithBalance('100.00', newGatewayTrxId(), '1,000.00'), received_at: at(0), device_message_id: 'inbox-1' }]));
    // The phone receives the stuck payment's SMS but the app was killed: never forwarded.
    const missed = await sim('sms', '--miss', '--file', smsFile('b.json', [{ sender: 'bKash', body: creditWithBalance('500.00', stuckTrx, '1,500.00'), received_at: at(20), device_message_id: 'inbox-2' }]));
    expect(missed.results[0]).toMatchObject({ forwarded: false, reason: 'missed' });
    expect((await transactionRow(t, stuck.transaction.id)).status).toBe('awaiting_verification');

    // The next SMS reports a balance its predecessor cannot explain: the chain breaks.
    const breakStarted = performance.now();
    const next = await sim('sms', '--file', smsFile('c.json', [{ sender: 'bKash', body: creditWithBalance('300.00', nextTrx, '1,800.00'), received_at: at(40), device_message_id: 'inbox-3' }]));
    expect(next.results[0].match_status).toBe('balance_mismatch');

    // The phone polls its commands (as after the push the retry sweep sends) and re-sends the window from its inbox.
    const answered = await sim('backfill');
    const repaired = performance.now();
    expect(answered.answered).toHaveLength(1);
    expect(answered.answered[0].reason).toBe('balance_chain_break');

    expect((await transactionRow(t, stuck.transaction.id)).status).toBe('completed');
    expect(await eventsOf(t, stuck.transaction.id)).toEqual(['payment.completed']);
    const [req] = await t.sql<{ status: string; resent_count: number }>('SELECT status, resent_count FROM backfill_requests WHERE brand_id = $1', [brandId]);
    // The whole window came back; the two already stored were answered as they were, not stored again.
    expect(req).toEqual({ status: 'answered', resent_count: 3 });
    const records = await t.sql<{ device_message_id: string; match_status: string }>('SELECT device_message_id, match_status FROM sms_records WHERE brand_id = $1 ORDER BY id', [brandId]);
    expect(records.map((r) => r.device_message_id)).toEqual(['inbox-1', 'inbox-3', 'inbox-2']);
    expect(records[2]!.match_status).toBe('matched');

    // The re-sent SMS filled the gap: the link that broke is repaired (its decision stays for a person), and the
    // chain is trusted again, so the next payment's SMS completes by itself.
    const [broke] = await t.sql<{ match_status: string; chain_state: string }>("SELECT match_status, chain_state FROM sms_records WHERE brand_id = $1 AND device_message_id = 'inbox-3'", [brandId]);
    expect(broke).toEqual({ match_status: 'balance_mismatch', chain_state: 'repaired' });
    const laterTrx = newGatewayTrxId();
    const later = await seedPayment(t, scene, { amount: '200.00', status: 'awaiting_verification', gatewayTrxId: laterTrx, senderNumber: '01712345515' });
    const after = await sim('sms', '--file', smsFile('d.json', [{ sender: 'bKash', body: creditWithBalance('200.00', laterTrx, '2,000.00'), received_at: at(60), device_message_id: 'inbox-4' }]));
    expect(after.results[0].match_status).toBe('matched');
    expect((await transactionRow(t, later.transaction.id)).status).toBe('completed');

    const ms = Math.round(repaired - breakStarted);
    console.log(`self-repair: chain break to payment completed in ${ms} ms (forward, command poll, re-send, match)`);
  });
});
