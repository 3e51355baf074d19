import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { consoleOwnerLines, deliverFirstRunBanner, firstRunSetup } from '../../server/first-run.ts';
import { ensureFirstOwner } from '../../server/domain/operators/service.ts';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { runCli } from './admin-support.ts';
import { loginAs, session } from './console-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer({ WORKERS_ENABLED: 'false' });
});
afterAll(() => t?.close());

const cli = (args: string[]) => runCli(t, args);

describe('first run: the console owner', () => {
  it('the start-up step creates it and hands its login over with the first-run credentials', async () => {
    await firstRunSetup(t.runtime, Number(new URL(t.baseUrl).port));
    const text = readFileSync(path.resolve(t.config.DATA_DIR, 'first-run.txt'), 'utf8');
    const [, email, password] = /Console login: +(\S+) \/ (\S+) /.exec(text)!;
    expect(email).toBe('owner@localhost');
    expect((await loginAs(t, email!, password!)).status).toBe(200);
    expect(t.logs.join('\n')).not.toContain(password!);
    // Started again: nothing new.
    await t.sql('DELETE FROM operator_sessions');
    await firstRunSetup(t.runtime, Number(new URL(t.baseUrl).port));
    expect(await t.sql('SELECT email FROM operators')).toEqual([{ email: 'owner@localhost' }]);
    await t.sql('DELETE FROM operators');
  });

  it('is created once, on a database without operators, with a password that logs in', async () => {
    const results = await Promise.all([ensureFirstOwner(t.runtime.deps.db, 'Owner@Localhost'), ensureFirstOwner(t.runtime.deps.db, 'owner@localhost')]);
    const owner = results.find((r) => r !== null)!;
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(owner.email).toBe('owner@localhost');
    expect(await ensureFirstOwner(t.runtime.deps.db, 'owner@localhost')).toBeNull();
    const login = await loginAs(t, 'owner@localhost', owner.password);
    expect([login.status, login.body.data.operator.role]).toEqual([200, 'owner']);

    // Not a terminal: the login goes to DATA_DIR/first-run.txt, never to the log.
    const logs: string[] = [];
    const lines = ['', ...consoleOwnerLines(owner, t.baseUrl), ''].join('\n');
    const { file } = deliverFirstRunBanner(lines, { isTTY: false, write: () => undefined, dataDir: t.config.DATA_DIR, logger: { info: (...a: unknown[]) => logs.push(JSON.stringify(a)) } as never });
    expect(file).toBe(path.resolve(t.config.DATA_DIR, 'first-run.txt'));
    const text = readFileSync(file!, 'utf8');
    expect(text).toContain(`  Console:            ${t.baseUrl}/admin\n`);
    expect(text).toContain(`  Console login:      owner@localhost / ${owner.password} (owner; change the password after logging in)\n`);
    expect(logs.join('\n')).not.toContain(owner.password);
  });
});

describe('operators: CLI commands', () => {
  it('create (one-time password), list, reset-password, disable', async () => {
    const one = (await t.createBrand('CLI Brand 1')).brandId;
    const two = (await t.createBrand('CLI Brand 2')).brandId;
    const unknownBrand = await cli(['operators:create', '--email', 'Cli.Op@example.com', '--name', 'CLI Op', '--role', 'operator', '--brands', `${one},${two + 1000}`]);
    expect(unknownBrand.code).not.toBe(0);
    expect(unknownBrand.stderr).toContain('brand_ids');
    expect(await t.sql("SELECT id FROM operators WHERE email = 'cli.op@example.com'")).toEqual([]);
    const created = await cli(['operators:create', '--email', 'Cli.Op@example.com', '--name', 'CLI Op', '--role', 'operator', '--brands', `${one},${two}`, '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { operator, password } = created.json();
    expect(operator).toMatchObject({ email: 'cli.op@example.com', role: 'operator', brand_ids: [one, two] });
    await session(t, 'cli.op@example.com', password);

    const listed = await cli(['operators:list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('cli.op@example.com');
    expect(listed.stdout).toContain(`${one},${two}`);

    const reset = await cli(['operators:reset-password', '--email', 'CLI.OP@example.com']);
    expect(reset.code, reset.stderr).toBe(0);
    const newPassword = /One-time password: (\S+)/.exec(reset.stdout)![1]!;
    expect((await loginAs(t, 'cli.op@example.com', password)).status).toBe(401);
    expect((await loginAs(t, 'cli.op@example.com', newPassword)).status).toBe(200);

    const disabled = await cli(['operators:disable', '--email', 'cli.op@example.com', '--json']);
    expect([disabled.code, disabled.json().disabled]).toEqual([0, true]);
    expect((await loginAs(t, 'cli.op@example.com', newPassword)).status).toBe(401);

    const bad = await cli(['operators:create', '--email', 'x@example.com', '--name', 'X', '--role', 'king']);
    expect(bad.code).toBe(64);
    const unknown = await cli(['operators:disable', '--email', 'nobody@example.com']);
    expect(unknown.code).toBe(64);
    const lastOwner = await cli(['operators:disable', '--email', 'owner@localhost']);
    expect([lastOwner.code, lastOwner.stderr]).toEqual([1, expect.stringContaining('LAST_OWNER')]);
  });
});
