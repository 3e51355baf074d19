import { initContract } from '@ts-rest/core';

const c = initContract();

/** The admin API (`/api/admin/v1`), called by the admin panel and the CLI with the admin token. */
export const adminContract = c.router({});
