import { describe, expect, it } from 'vitest';
import { phoneHealth } from '../../server/domain/devices/diagnostics.ts';

describe('phoneHealth', () => {
  it.each([
    [{ smsPermission: null, batteryOptimizationIgnored: null }, 'unknown', 0],
    [{ smsPermission: true, batteryOptimizationIgnored: true }, 'ok', 0],
    [{ smsPermission: true, batteryOptimizationIgnored: null }, 'ok', 0],
    [{ smsPermission: true, batteryOptimizationIgnored: false }, 'at_risk', 1],
    [{ smsPermission: null, batteryOptimizationIgnored: false }, 'at_risk', 1],
    [{ smsPermission: false, batteryOptimizationIgnored: true }, 'cannot_receive', 1],
    [{ smsPermission: false, batteryOptimizationIgnored: false }, 'cannot_receive', 2],
  ] as const)('%o is %s with %i problem(s)', (report, state, problems) => {
    const h = phoneHealth(report);
    expect(h.state).toBe(state);
    expect(h.problems).toHaveLength(problems);
  });
});
