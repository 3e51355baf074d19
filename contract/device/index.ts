import { initContract } from '@ts-rest/core';
import { devicesContract } from './devices.ts';
import { filterRulesContract } from './filter-rules.ts';

const c = initContract();

/**
 * The companion device API (`/api/mobile/v1`), called by the paired phone with
 * its access JWT. Each resource file sets the `/api/mobile/v1` prefix itself.
 */
export const deviceContract = c.router({
  devices: devicesContract,
  filterRules: filterRulesContract,
});
