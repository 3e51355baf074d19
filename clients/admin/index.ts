import { adminContract } from '../../contract/admin/index.ts';
import { ADMIN_ACTOR_HEADER } from '../../contract/admin/shared.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';
import { HttpCore, type ClientOptions, type RequestOptions } from '../shared/http.ts';
import { buildResources, routeInvoker, type Resources } from '../shared/resources.ts';

export * from '../shared/errors.ts';
export type { ClientOptions, RequestOptions, FetchLike } from '../shared/http.ts';
export type { Page, PageMetaLike } from '../shared/pagination.ts';
export type { RouteResult, RouteParams, RouteArgs, Resources } from '../shared/resources.ts';
export { adminContract };

export const ADMIN_CLIENT_NAME = '@paycollect/admin';
export const ADMIN_CLIENT_VERSION = '0.1.0';

export interface PaycollectAdminOptions extends ClientOptions {
  /** The service's admin token (`ADMIN_TOKEN`, or `adminToken` in `DATA_DIR/secrets.json`). */
  adminToken: string;
  /** Who is acting, recorded in the audit log as `admin:<actor>` (e.g. an operator name, `cli`, `panel`). */
  actor?: string;
}

/** One namespace per resource of the admin contract: `admin.brands.create(...)`, `admin.refunds.complete(id)`. */
export type PaycollectAdmin = Resources<typeof adminContract> & {
  /** The service's base URL this client talks to. */
  readonly baseUrl: string;
};

class AdminClient {
  readonly baseUrl: string;

  constructor(options: PaycollectAdminOptions) {
    const token = options?.adminToken;
    if (typeof token !== 'string' || token.trim() === '') {
      throw new TypeError('adminToken is required: new PaycollectAdmin({ adminToken, baseUrl })');
    }
    const headers = { ...options.headers, ...(options.actor ? { [ADMIN_ACTOR_HEADER]: options.actor } : {}) };
    const core = new HttpCore({ ...options, headers }, { name: ADMIN_CLIENT_NAME, version: ADMIN_CLIENT_VERSION });
    this.baseUrl = core.baseUrl;
    // The token lives in this closure only, so logging the client never prints it.
    const invoke = routeInvoker<RequestOptions>(core, (route): Record<string, string> =>
      (route.metadata as RouteMeta | undefined)?.auth === 'admin' ? { authorization: `Bearer ${token}` } : {},
    );
    Object.assign(this, buildResources(adminContract, invoke));
  }
}

/**
 * The admin API client: every route of `contract.admin`, typed from the contract.
 * Creating calls (POST, PATCH) are never retried automatically: the admin API takes
 * no `Idempotency-Key`, so a retry could create a second key or code.
 *
 * ```ts
 * const admin = new PaycollectAdmin({ baseUrl: 'http://127.0.0.1:3000', adminToken, actor: 'alice' });
 * const brand = await admin.brands.create({ name: 'Shop' });
 * const { key } = await admin.brands.createApiKey(brand.id, { name: 'backend' });
 * ```
 */
export const PaycollectAdmin = AdminClient as unknown as new (options: PaycollectAdminOptions) => PaycollectAdmin;
