import { z } from 'zod';
import { intQuery, meta, modeSchema, type ErrorCode } from '../common/index.ts';

/** Every admin route lives under this prefix. */
export const ADMIN_PATH_PREFIX = '/api/admin/v1';

/** Header naming who is acting, for the audit log. */
export const ADMIN_ACTOR_HEADER = 'x-admin-actor';

/**
 * Headers of every admin route. The admin token is one shared credential, so the
 * caller may say who it is acting for; the label is recorded with every change
 * (`admin:<label>`), never trusted for anything else.
 */
export const adminHeaders = z.object({
  [ADMIN_ACTOR_HEADER]: z
    .string()
    .regex(/^[A-Za-z0-9._@:-]{1,64}$/, 'Must be 1 to 64 characters of A-Z a-z 0-9 . _ @ : -')
    .optional()
    .describe('Who is acting (an operator name, `cli`, `panel`): recorded in the audit log as `admin:<label>`. Default: `admin`.'),
});

/**
 * Router options shared by every admin resource. Every admin route may answer
 * 403: a console operator whose role lacks the route's permission
 * (`FORBIDDEN`), or a session request without its CSRF token on a method other
 * than GET/HEAD (`CSRF_TOKEN_INVALID`); responses.ts adds those codes.
 */
export const adminRouterOptions = {
  pathPrefix: ADMIN_PATH_PREFIX,
  strictStatusCodes: true,
  baseHeaders: adminHeaders,
} as const;

/**
 * Route metadata of an admin route; `errors` keeps its literal codes, which type
 * the route's error responses. Its `permission` comes from permissions.ts.
 */
export const adminMeta = <const E extends readonly ErrorCode[] = readonly []>(tag: string, errors: E = [] as unknown as E) =>
  meta({ auth: 'admin', tag: `Admin: ${tag}`, errors });

/** A positive integer id in a path, e.g. `/brands/12`. */
export const idParam = (what: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, `Must be a ${what} id (a positive whole number)`)
    .transform(Number)
    .describe(`Id of the ${what}.`);

/** Optional `brand_id` filter of list routes. */
export const brandFilter = intQuery({ min: 1, description: 'Only records of this brand.' }).optional();
export const modeFilter = modeSchema.optional().describe('Only records of this mode (`live` or `test`).');
export const modeField = modeSchema.describe('The mode the record belongs to.');
