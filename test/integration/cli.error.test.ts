import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestContext } from '../support/harness.ts';
import { runCli } from './admin-support.ts';

let t: TestContext;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t?.close());

const cli = (args: string[], env: Record<string, string> = {}) => runCli(t, args, env);

describe('CLI errors, as a child process', () => {
  it('errors: the API’s code and message with exit 1 (also as JSON), usage mistakes exit 64, no token exits 78', async () => {
    const notFound = await cli(['brand:get', '--brand', '999999']);
    expect(notFound.code).toBe(1);
    expect(notFound.stdout).toBe('');
    expect(notFound.stderr).toMatch(/^error BRAND_NOT_FOUND \(HTTP 404\): Brand not found \[request req_[0-9a-f]{32}\]\n$/);

    const invalid = await cli(['gateway:create', '--code', 'Bad Code', '--name', 'x', '--type', 'manual', '--methods', 'a', '--currencies', 'BDT', '--json']);
    expect(invalid.code).toBe(1);
    expect(invalid.json().error).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, errors: [expect.objectContaining({ field: 'code' })] });

    const missing = await cli(['api-key:create', '--name', 'x']);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain('--brand must be a positive whole number');
    expect((await cli(['brand:list', '--bogus'])).code).toBe(64);
    const unknown = await cli(['nope']);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('Unknown command "nope"');

    const noToken = await cli(['brand:list'], { DATA_DIR: '/nonexistent' });
    expect(noToken.code).toBe(78);
    expect(noToken.stderr).toContain('No admin token');
    const wrongToken = await cli(['brand:list'], { ADMIN_TOKEN: 'adm_wrong' });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toContain('error UNAUTHORIZED (HTTP 401)');
    const down = await cli(['brand:list', '--base-url', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('error CONNECTION_ERROR');
    expect(down.stderr).toContain('Is the service running at http://127.0.0.1:9?');
  });
});
