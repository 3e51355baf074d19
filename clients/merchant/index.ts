import type { AppRouter } from '@ts-rest/core';
import { merchantContract } from '../../contract/merchant/index.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';
import { HttpCore, type ClientOptions, type RequestOptions } from '../shared/http.ts';
import { buildResources, routeInvoker, type Resources } from '../shared/resources.ts';
import { constructEvent } from '../shared/webhook-verify.ts';
import { SDK_NAME, SDK_VERSION } from './version.ts';

export * from '../shared/errors.ts';
export { constructEvent, WebhookSignatureError, DEFAULT_TOLERANCE_SECONDS, WEBHOOK_SIGNATURE_HEADER } from '../shared/webhook-verify.ts';
export type { WebhookEvent, WebhookHeaders, WebhookSignatureErrorReason } from '../shared/webhook-verify.ts';
export type { ClientOptions, RequestOptions, FetchLike } from '../shared/http.ts';
export type { Page, PageMetaLike } from '../shared/pagination.ts';
export type { RouteResult, RouteParams, RouteArgs, Resources } from '../shared/resources.ts';
export { merchantContract };
export { SDK_VERSION as VERSION };

export interface PaycollectMerchantOptions extends ClientOptions {
  /** The brand's secret API key. Keep it on your server; never ship it to a browser or app. */
  apiKey: string;
}

type MerchantContract = typeof merchantContract;

interface WebhookHelpers {
  /**
   * Verifies a webhook delivery (HMAC-SHA256 over `{t}.{rawBody}`, `X-Webhook-Signature:
   * t=…,v1=…`) and returns the parsed event; throws `WebhookSignatureError` otherwise.
   * Pass the raw body exactly as received, not re-serialised JSON. During a secret
   * rotation pass both secrets as an array.
   */
  constructEvent: typeof constructEvent;
}

type WebhookRoutes = MerchantContract extends { webhooks: infer W extends AppRouter } ? Resources<W> : unknown;

/** One namespace per resource of the merchant contract, plus `webhooks.constructEvent`. */
export type MerchantResources = Omit<Resources<MerchantContract>, 'webhooks'> & { webhooks: WebhookRoutes & WebhookHelpers };

export type PaycollectMerchant = MerchantResources & {
  /** The service's base URL this client talks to. */
  readonly baseUrl: string;
};

class MerchantClient {
  readonly baseUrl: string;

  constructor(options: PaycollectMerchantOptions) {
    const apiKey = options?.apiKey;
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      throw new TypeError('apiKey is required: new PaycollectMerchant({ apiKey, baseUrl })');
    }
    const core = new HttpCore(options, { name: SDK_NAME, version: SDK_VERSION });
    this.baseUrl = core.baseUrl;
    // The key lives in this closure only, so logging the client never prints it.
    const invoke = routeInvoker<RequestOptions>(core, (route): Record<string, string> =>
      (route.metadata as RouteMeta | undefined)?.auth === 'merchant' ? { authorization: `Bearer ${apiKey}` } : {},
    );
    const resources = buildResources(merchantContract, invoke) as Record<string, unknown>;
    resources.webhooks = Object.assign((resources.webhooks as object | undefined) ?? {}, { constructEvent });
    Object.assign(this, resources);
  }
}

/**
 * The merchant API client.
 *
 * ```ts
 * const paycollect = new PaycollectMerchant({ apiKey: process.env.PAYCOLLECT_KEY!, baseUrl: 'https://pay.example.com' });
 * const brand = await paycollect.brand.get();
 * ```
 */
export const PaycollectMerchant = MerchantClient as unknown as new (options: PaycollectMerchantOptions) => PaycollectMerchant;

/** Webhook helpers without a client (a receiver needs only the signing secret). */
export const webhooks: WebhookHelpers = { constructEvent };
