import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';

/** SERVICE_ROLE and the older WORKERS_ENABLED: one rule (server/config.ts serviceRole, README "Running API and worker processes separately"). */
describe('SERVICE_ROLE', () => {
  const role = (env: Record<string, string>) => {
    const c = loadConfig(env);
    return [c.SERVICE_ROLE, c.WORKERS_ENABLED];
  };

  it('defaults to all, which works jobs (what npm start ran before roles existed)', () => {
    expect(role({})).toEqual(['all', true]);
  });

  it('takes each role; only api works no jobs', () => {
    expect(role({ SERVICE_ROLE: 'all' })).toEqual(['all', true]);
    expect(role({ SERVICE_ROLE: 'api' })).toEqual(['api', false]);
    expect(role({ SERVICE_ROLE: 'worker' })).toEqual(['worker', true]);
  });

  it('reads WORKERS_ENABLED=false as the api role and true as all', () => {
    expect(role({ WORKERS_ENABLED: 'false' })).toEqual(['api', false]);
    expect(role({ WORKERS_ENABLED: 'true' })).toEqual(['all', true]);
  });

  it('accepts both when they agree', () => {
    expect(role({ SERVICE_ROLE: 'api', WORKERS_ENABLED: 'false' })).toEqual(['api', false]);
    expect(role({ SERVICE_ROLE: 'worker', WORKERS_ENABLED: 'true' })).toEqual(['worker', true]);
  });

  it('refuses both when they disagree, naming the variable', () => {
    for (const env of [
      { SERVICE_ROLE: 'worker', WORKERS_ENABLED: 'false' },
      { SERVICE_ROLE: 'all', WORKERS_ENABLED: 'false' },
      { SERVICE_ROLE: 'api', WORKERS_ENABLED: 'true' },
    ]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/WORKERS_ENABLED: must agree with SERVICE_ROLE/);
    }
  });

  it('refuses an unknown role', () => {
    expect(() => loadConfig({ SERVICE_ROLE: 'both' })).toThrow(/SERVICE_ROLE: must be all, api or worker/);
  });
});
