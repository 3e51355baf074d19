import { describe, expect, it } from 'vitest';
import { ConfigError, configWarnings, loadConfig } from '../../server/config.ts';

const trust = (value: string) => loadConfig({ TRUST_PROXY: value }).TRUST_PROXY;

describe('TRUST_PROXY', () => {
  it('defaults to false; false, no and 0 mean no proxy', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    for (const v of ['false', 'no', '0', 'FALSE']) expect(trust(v)).toBe(false);
  });

  it('a number is a hop count (1 no longer means "trust every hop")', () => {
    expect(trust('1')).toBe(1);
    expect(trust('2')).toBe(2);
  });

  it('accepts addresses, subnets and the names Express knows, as one list', () => {
    expect(trust('10.0.0.1')).toBe('10.0.0.1');
    expect(trust(' loopback , 10.0.0.0/8,fd00::/8, uniquelocal,::1 ')).toBe('loopback, 10.0.0.0/8, fd00::/8, uniquelocal, ::1');
    expect(trust('linklocal')).toBe('linklocal');
  });

  it('true still parses (old setups start; the server warns that it is unsafe)', () => {
    expect(trust('true')).toBe(true);
    expect(configWarnings(loadConfig({ TRUST_PROXY: 'true' }))).toEqual([expect.stringMatching(/^TRUST_PROXY=true trusts every X-Forwarded-For hop/)]);
    expect(configWarnings(loadConfig({ TRUST_PROXY: '1' }))).toEqual([]);
  });

  it.each(['maybe', '21', '10.0.0.0/33', '300.1.1.1', 'loopback,', '10.0.0.1;10.0.0.2', 'localhost', '-1'])('refuses %s with a message naming the variable', (value) => {
    expect(() => trust(value)).toThrow(ConfigError);
    expect(() => trust(value)).toThrow(/TRUST_PROXY: must be false, a hop count/);
  });
});
