import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { nameText, ok, okList, pageMetaWithPagesSchema, pageQuerySchema, timestampSchema, uuidSchema, modeSchema } from '../common/index.ts';
import { adminMeta, adminRouterOptions, idParam } from './shared.ts';
import { brandStatuses, apiKeyDialects, apiKeyScopes, webhookSignings } from '../vocabulary.ts';
import { webhookEndpointSchema } from '../merchant/webhooks.ts';

const c = initContract();

/**
 * An IANA zone name that both ICU and PostgreSQL understand. Offsets such as
 * `+06:00` are refused: PostgreSQL reads POSIX offsets with the opposite sign.
 */
export const timeZoneSchema = z
  .string()
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/, 'Must be an IANA time zone name, e.g. "Asia/Dhaka" or "UTC"')
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'Unknown time zone; use an IANA name such as "Asia/Dhaka" or "UTC"')
  .describe('IANA time zone used for "today" on the device dashboard.')
  .meta({ examples: ['Asia/Dhaka'] });

export const brandLogoSchema = z
  .object({
    url: z.string().describe('Where the checkout serves it (relative to the service); changes with the image, so it may be cached for good.'),
    content_type: z.enum(['image/png', 'image/jpeg', 'image/webp']),
    width: z.number().int(),
    height: z.number().int(),
    bytes: z.number().int(),
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminBrandLogo' });

/** Checked in the service (INVALID_BRAND_COLOR), not here, so a bad colour has its own code. */
const colorInput = z
  .string()
  .max(32)
  .nullable()
  .describe('`#rrggbb` (e.g. `#0a7d4f`), or null for the default. Anything else is `INVALID_BRAND_COLOR`.')
  .meta({ examples: ['#0a7d4f'] });

const supportPhoneInput = z
  .string()
  .trim()
  .regex(/^\+?[0-9][0-9 -]{4,30}$/, 'Digits, spaces and dashes, optionally starting with +')
  .nullable()
  .describe('A phone number customers may call, e.g. `+880 1700-000000`; null removes it.');

const supportEmailInput = z.email('Must be an e-mail address').max(254).nullable().describe('An address customers may write to; null removes it.');

export const adminBrandSchema = z
  .object({
    id: z.number().int(),
    uuid: uuidSchema,
    name: z.string(),
    timezone: z.string().describe('IANA time zone used for "today" figures.'),
    status: z.enum(brandStatuses).describe('`disabled`: its API keys, devices and pairing codes stop working at once.'),
    receipts_enabled: z
      .boolean()
      .describe("Customers get a receipt e-mail for each payment and refund completed since it was switched on (when the payment names the customer's e-mail and SMTP_URL is set). Off by default."),
    primary_color: z.string().nullable().describe('The checkout\'s primary colour, `#rrggbb`; null: the default blue. Button text is white or dark, whichever contrasts more (WCAG).'),
    support_phone: z.string().nullable().describe('Shown to paying customers on the checkout pages; null: none.'),
    support_email: z.string().nullable().describe('Shown to paying customers on the checkout pages; null: none.'),
    logo: brandLogoSchema.nullable().describe('The checkout logo; null: the brand\'s initial is shown. Set with `PUT /api/admin/v1/brands/{brand_id}/logo`.'),
    created_at: timestampSchema,
    updated_at: timestampSchema,
  })
  .meta({ id: 'AdminBrand' });

export const createBrandBodySchema = z
  .strictObject({
    name: nameText(200, 'name is required').describe('Display name shown to paying customers.'),
    timezone: timeZoneSchema.optional().describe('Default UTC.'),
  })
  .meta({ id: 'AdminCreateBrandRequest' });

export const updateBrandBodySchema = z
  .strictObject({
    name: nameText(200).optional(),
    timezone: timeZoneSchema.optional(),
    status: z.enum(brandStatuses).optional().describe('Disable to stop every credential of the brand at once; enable again to restore them.'),
    receipts_enabled: z.boolean().optional().describe('Send customers receipt e-mails from now on (nothing completed before is mailed), or stop.'),
    primary_color: colorInput.optional(),
    support_phone: supportPhoneInput.optional(),
    support_email: supportEmailInput.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'Give at least one of name, timezone, status, receipts_enabled, primary_color, support_phone, support_email')
  .meta({ id: 'AdminUpdateBrandRequest' });

export const apiKeySchema = z
  .object({
    id: z.number().int(),
    brand_id: z.number().int(),
    name: z.string(),
    prefix: z.string().describe('First characters of the key (`sk_live_AbCd`; keys issued before secret keys were named start `pk_`), to tell keys apart. The key itself is never shown again.'),
    mode: modeSchema.describe('The objects the key sees and creates: `live` or `test`.'),
    dialect: z.enum(apiKeyDialects).describe('`native` (`sk_…`: this API\'s shapes) or `ownpay` (`op_…`: the shapes OwnPay\'s plugins and SDKs send and read; README "Coming from OwnPay").'),
    created_at: timestampSchema,
    last_used_at: timestampSchema.nullable().describe('Last authenticated call, to the minute; null when never used.'),
    revoked_at: timestampSchema.nullable(),
    scopes: z
      .array(z.enum(apiKeyScopes))
      .nullable()
      .describe('What the key may do: `read` (every GET), `write` (payments, payment links, customers), `refunds` (ask for refunds), `webhooks` (webhook endpoints and deliveries). Null: everything. A call outside them answers 403 `INSUFFICIENT_SCOPE` naming the scope.'),
    expires_at: timestampSchema.nullable().describe('From then on the key is refused (401) like a revoked one; null: never.'),
  })
  .meta({ id: 'AdminApiKey' });

export const apiKeyCreatedSchema = apiKeySchema
  .extend({ key: z.string().describe('The secret API key. Shown only now; only its hash is stored.') })
  .meta({ id: 'AdminApiKeyCreated' });

export const createApiKeyBodySchema = z
  .strictObject({
    name: nameText(200, 'name is required').describe('What the key is for, e.g. "shop backend".'),
    mode: modeSchema.optional().describe('`test` keys (`sk_test_…`) see and create only test objects and may use the sandbox gateway; `live` keys (`sk_live_…`) only live ones. Default `live`.'),
    dialect: z
      .enum(apiKeyDialects)
      .optional()
      .describe('`ownpay` issues an `op_live_…`/`op_test_…` key that OwnPay\'s WooCommerce and WHMCS plugins and its SDKs accept, answered in their shapes where theirs differ from ours (README "Coming from OwnPay"). Default `native` (`sk_…`).'),
    scopes: z
      .array(z.enum(apiKeyScopes))
      .min(1, 'Give at least one scope, or leave scopes out for a key that may do everything')
      .refine((s) => new Set(s).size === s.length, 'Each scope once')
      .optional()
      .describe('Limit the key to these scopes (`read`, `write`, `refunds`, `webhooks`). Left out: the key may do everything.'),
    expires_at: timestampSchema
      .refine((t) => new Date(t).getTime() > Date.now(), 'Must be in the future')
      .optional()
      .describe('When the key stops working (ISO 8601, in the future). Left out: never.'),
  })
  .meta({ id: 'AdminCreateApiKeyRequest' });

const brandPath = z.object({ brand_id: idParam('brand') });

export const adminBrandsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/brands',
      summary: 'Create a brand',
      description: 'Creates an `active` brand (time zone `UTC` unless given). It has no API key yet: create one with `POST /api/admin/v1/brands/{brand_id}/api-keys`. Recorded in the audit log.',
      body: createBrandBodySchema,
      responses: { 201: ok(adminBrandSchema) },
      metadata: adminMeta('Brands'),
    },
    list: {
      method: 'GET',
      path: '/brands',
      summary: 'List brands',
      description: 'The brands the caller may see (an operator limited to some brands sees only those), oldest first.',
      query: z.strictObject({ ...pageQuerySchema.shape, status: z.enum(brandStatuses).optional().describe('Only brands in this status.') }),
      responses: { 200: okList(adminBrandSchema, pageMetaWithPagesSchema) },
      metadata: adminMeta('Brands'),
    },
    get: {
      method: 'GET',
      path: '/brands/:brand_id',
      summary: 'Get a brand',
      description: 'One brand by its id, whatever its status.',
      pathParams: brandPath,
      responses: { 200: ok(adminBrandSchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND']),
    },
    update: {
      method: 'PATCH',
      path: '/brands/:brand_id',
      summary: 'Update a brand',
      description: 'Changes the given fields only. A `primary_color` that is not `#rrggbb` is `INVALID_BRAND_COLOR`. Status, time zone, receipts and checkout look (colour, support contact) changes are recorded in the audit log.',
      pathParams: brandPath,
      body: updateBrandBodySchema,
      responses: { 200: ok(adminBrandSchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND', 'INVALID_BRAND_COLOR']),
    },
    setLogo: {
      method: 'PUT',
      path: '/brands/:brand_id/logo',
      summary: "Set a brand's checkout logo",
      description:
        'The image as base64 in JSON. PNG, JPEG or WebP, judged by the file\'s first bytes; SVG is refused (it can carry script). At most 64 KB decoded (`BRAND_LOGO_TOO_LARGE`), each side 16–2048 px (`BRAND_LOGO_BAD_DIMENSIONS`), another type `BRAND_LOGO_UNSUPPORTED_TYPE`; a refused logo leaves the previous one. Served to customers from `logo.url` with a long cache. Recorded in the audit log.',
      pathParams: brandPath,
      body: z
        .strictObject({ content_base64: z.string().min(1, 'content_base64 is required').max(120_000).describe('The image file, base64 (RFC 4648).') })
        .meta({ id: 'AdminSetBrandLogoRequest' }),
      responses: { 200: ok(brandLogoSchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND', 'BRAND_LOGO_TOO_LARGE', 'BRAND_LOGO_UNSUPPORTED_TYPE', 'BRAND_LOGO_BAD_DIMENSIONS']),
    },
    deleteLogo: {
      method: 'DELETE',
      path: '/brands/:brand_id/logo',
      summary: "Remove a brand's checkout logo",
      description: "The checkout shows the brand's initial again. Removing a logo that is not there answers the brand as it is. Recorded in the audit log.",
      pathParams: brandPath,
      body: c.noBody(),
      responses: { 200: ok(adminBrandSchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND']),
    },
    createApiKey: {
      method: 'POST',
      path: '/brands/:brand_id/api-keys',
      summary: 'Create an API key',
      description: 'The key is in this response only; store it now. Recorded in the audit log (without the key).',
      pathParams: brandPath,
      body: createApiKeyBodySchema,
      responses: { 201: ok(apiKeyCreatedSchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND']),
    },
    listApiKeys: {
      method: 'GET',
      path: '/brands/:brand_id/api-keys',
      summary: "List a brand's API keys",
      description: 'Newest first, revoked ones included. Never the key itself.',
      pathParams: brandPath,
      responses: { 200: ok(z.array(apiKeySchema)) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND']),
    },
    listWebhookEndpoints: {
      method: 'GET',
      path: '/brands/:brand_id/webhook-endpoints',
      summary: "List a brand's webhook endpoints",
      description: 'Every endpoint of the brand, both modes, oldest first, with health and `signing`. Secrets are never shown.',
      pathParams: brandPath,
      responses: { 200: ok(z.array(webhookEndpointSchema)) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND']),
    },
    setWebhookEndpointSigning: {
      method: 'PATCH',
      path: '/brands/:brand_id/webhook-endpoints/:endpoint_id',
      summary: "Set a webhook endpoint's signing",
      description:
        '`ownpay` gives the endpoint the headers and body OwnPay\'s plugins verify (README "Coming from OwnPay"); `paycollect` the native ones. Recorded in the audit log when it changes.',
      pathParams: z.object({ brand_id: idParam('brand'), endpoint_id: idParam('webhook endpoint') }),
      body: z.strictObject({ signing: z.enum(webhookSignings) }).meta({ id: 'AdminSetWebhookEndpointSigningRequest' }),
      responses: { 200: ok(webhookEndpointSchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND', 'WEBHOOK_ENDPOINT_NOT_FOUND']),
    },
    revokeApiKey: {
      method: 'POST',
      path: '/brands/:brand_id/api-keys/:key_id/revocations',
      summary: 'Revoke an API key',
      description: 'The key stops working at once. Revoking a revoked key changes nothing and answers it as it is. Recorded in the audit log.',
      pathParams: z.object({ brand_id: idParam('brand'), key_id: idParam('API key') }),
      body: z.strictObject({}).optional().describe('No body (an empty object is accepted).'),
      responses: { 200: ok(apiKeySchema) },
      metadata: adminMeta('Brands', ['BRAND_NOT_FOUND', 'API_KEY_NOT_FOUND']),
    },
  },
  adminRouterOptions,
);
