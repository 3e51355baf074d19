import { initContract } from '@ts-rest/core';
import { brandContract } from './brand.ts';

const c = initContract();

/** The merchant API (`/api/v1`), called server to server with a brand API key. */
export const merchantContract = c.router({
  brand: brandContract,
});
