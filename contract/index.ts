import { initContract } from '@ts-rest/core';
import { adminContract } from './admin/index.ts';
import { checkoutContract } from './checkout/index.ts';
import { deviceContract } from './device/index.ts';
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
  device: deviceContract,
  admin: adminContract,
  checkout: checkoutContract,
});

export type Contract = typeof contract;
