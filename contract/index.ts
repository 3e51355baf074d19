import { initContract } from '@ts-rest/core';
import { merchantContract } from './merchant/index.ts';
import { systemContract } from './system.ts';

const c = initContract();

/**
 * The one contract: every JSON route of every surface. The Express server, the
 * SDKs and openapi/openapi.json are all derived from it.
 */
export const contract = c.router({
  system: systemContract,
  merchant: merchantContract,
});

export type Contract = typeof contract;
