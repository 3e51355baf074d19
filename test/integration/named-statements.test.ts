import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { forwardSms, newGatewayTrxId, seedPayment, smsBodies, smsScene, type SmsScene } from '../support/sms-matching.ts';

/**
 * The statements compiled once are sent as named (prepared) statements
 * (the driver in server/infra/database/database.ts): parsed and planned once per
 * connection. Checked at the pg client, where every statement of the
 * in-process server passes: which go by name, that one name always means one
 * text, that DDL on a table they read does not break them, and that
 * DATABASE_NAMED_STATEMENTS=false sends none by name.
 */

interface Sent {
  name: string | null;
  text: string;
}

/** Statements the server's pools send while `fn` runs, but pg-boss's. */
async function capture(fn: () => Promise<unknown>): Promise<Sent[]> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const sent: Sent[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { text?: string; name?: string };
    const text = typeof q === 'string' ? q : (q?.text ?? '');
    if (!/\bpgboss\./i.test(text)) sent.push({ name: typeof q === 'string' ? null : (q?.name ?? null), text });
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return sent;
}

async function forwardOne(t: TestContext, scene: SmsScene, amount: string) {
  const id = newGatewayTrxId();
  await seedPayment(t, scene, { amount, status: 'awaiting_verification', gatewayTrxId: id });
  let answers: Awaited<ReturnType<typeof forwardSms>> = [];
  const sent = await capture(async () => {
    answers = await forwardSms(t, scene.device, [{ sender: 'bKash', body: smsBodies.bkash(amount, id), received_at: new Date(Date.now() - 60_000).toISOString() }]);
  });
  return { status: answers[0]!.match_status, sent };
}

describe('named statements on (the default)', () => {
  let t: TestContext;
  let scene: SmsScene;
  beforeAll(async () => {
    t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off' });
    scene = await smsScene(t);
    // The brand's first request creates its filter rules; later ones are the steady state.
    await forwardOne(t, scene, '150.00');
  });
  afterAll(() => t?.close());

  it("a forwarded SMS's hot statements go by name, one name per text, and the same names on the next SMS", async () => {
    const first = await forwardOne(t, scene, '151.00');
    const second = await forwardOne(t, scene, '152.00');
    expect([first.status, second.status]).toEqual(['matched', 'matched']);
    const named = (s: Sent[]) => s.filter((x) => x.name !== null);
    for (const x of named(first.sent)) expect(x.name).toMatch(/^pc_[0-9a-f]{20}$/);
    // Device auth, filter rules, the record INSERT, the claim, trx-id locks, candidates, locks, completion,
    // events, endpoints, outcomes: by the same names on both SMS (a scheduled sweep may add its own to one window).
    const again = new Set(named(second.sent).map((x) => x.name));
    expect(new Set(named(first.sent).map((x) => x.name).filter((n) => again.has(n))).size).toBeGreaterThanOrEqual(10);
    // One name, one text (pg refuses a name reused for another text on a connection).
    const textOf = new Map<string, string>();
    for (const x of [...named(first.sent), ...named(second.sent)]) {
      expect(textOf.get(x.name!) ?? x.text).toBe(x.text);
      textOf.set(x.name!, x.text);
    }
    // BEGIN, COMMIT and statements built per request stay unnamed.
    expect(first.sent.filter((x) => /^(begin|commit)$/i.test(x.text)).every((x) => x.name === null)).toBe(true);
  });

  it('DDL on a table a named statement reads does not break it: PostgreSQL plans it again', async () => {
    await t.sql('ALTER TABLE sms_records ADD COLUMN named_statement_probe integer');
    try {
      expect((await forwardOne(t, scene, '153.00')).status).toBe('matched');
    } finally {
      await t.sql('ALTER TABLE sms_records DROP COLUMN named_statement_probe');
    }
    expect((await forwardOne(t, scene, '154.00')).status).toBe('matched');
  });
});

describe('DATABASE_NAMED_STATEMENTS=false', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await startTestServer({ RATE_LIMIT_PAIRING: 'off', RATE_LIMIT_DEVICE: 'off', DATABASE_NAMED_STATEMENTS: 'false' });
  });
  afterAll(() => t?.close());

  it('sends every statement unnamed, with the same outcome', async () => {
    const scene = await smsScene(t);
    const r = await forwardOne(t, scene, '160.00');
    expect(r.status).toBe('matched');
    expect(r.sent.length).toBeGreaterThan(8);
    expect(r.sent.filter((x) => x.name !== null)).toEqual([]);
  });
});
