import { initContract } from '@ts-rest/core';

const c = initContract();

/** The companion device API (`/api/mobile/v1`), called by the paired phone with its access JWT. */
export const deviceContract = c.router({});
