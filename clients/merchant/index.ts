import { merchantContract } from '../../contract/merchant/index.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';
import { HttpCore, type ClientOptions, type RequestOptions } from '../shared/http.ts';
import { buildNamedResources, routeInvoker } from '../shared/resources.ts';
import type { ResponseMeta } from '../shared/response-meta.ts';
import type { MerchantResources, WebhooksResource } from './api.generated.ts';
import { constructEvent, generateTestHeaderString, signTestPayload } from './webhooks.ts';
import { SDK_NAME, SDK_VERSION } from './version.ts';

/*
 * The public declarations name only this package's own types (api.generated.ts is
 * generated from the contract): no ts-rest or zod type reaches a consumer's compiler.
 */
export type * from './api.generated.ts';
export * from '../shared/errors.ts';
export { WebhookSignatureError, DEFAULT_TOLERANCE_SECONDS, WEBHOOK_SIGNATURE_HEADER } from '../shared/webhook-verify.ts';
export type { WebhookHeaders, WebhookSignatureErrorReason } from '../shared/webhook-verify.ts';
export { constructEvent, generateTestHeaderString, signTestPayload, type SignTestPayloadOptions } from './webhooks.ts';
export type { ClientOptions, RequestOptions, FetchLike } from '../shared/http.ts';
export type { Page, PageMetaLike } from '../shared/pagination.ts';
export type { ResponseMeta, RateLimitInfo, RateLimitQuota, WithResponse } from '../shared/response-meta.ts';
export { SDK_VERSION as VERSION };

export interface PaycollectMerchantOptions extends ClientOptions {
  /** The brand's secret API key. Keep it on your server; never ship it to a browser or app. */
  apiKey: string;
}

export interface WebhookHelpers {
  /** Verifies a delivery and returns the validated event union; see `constructEvent`. */
  constructEvent: typeof constructEvent;
  /** A signed test delivery (`{ body, headers }`) for your receiver's tests. */
  signTestPayload: typeof signTestPayload;
  /** The `X-Webhook-Signature` value for a test body. */
  generateTestHeaderString: typeof generateTestHeaderString;
}

/** One namespace per resource of the merchant API, plus the webhook helpers. */
export type PaycollectMerchant = Omit<MerchantResources<RequestOptions>, 'webhooks'> & {
  webhooks: WebhooksResource<RequestOptions> & WebhookHelpers;
  /** The service's base URL this client talks to. */
  readonly baseUrl: string;
  /**
   * Metadata of the last call that succeeded on this client: request id, idempotent
   * replay, rate limits. With concurrent calls prefer the result's own `lastResponse`.
   */
  readonly lastResponse: ResponseMeta | null;
};

const helpers: WebhookHelpers = { constructEvent, signTestPayload, generateTestHeaderString };

class MerchantClient {
  readonly baseUrl: string;
  #core: HttpCore;

  constructor(options: PaycollectMerchantOptions) {
    const apiKey = options?.apiKey;
    if (typeof apiKey !== 'string' || apiKey.trim() === '') {
      throw new TypeError('apiKey is required: new PaycollectMerchant({ apiKey, baseUrl })');
    }
    const core = new HttpCore(options, { name: SDK_NAME, version: SDK_VERSION });
    this.#core = core;
    this.baseUrl = core.baseUrl;
    // The key lives in this closure only, so logging the client never prints it.
    const invoke = routeInvoker<RequestOptions>(core, (route): Record<string, string> =>
      (route.metadata as RouteMeta | undefined)?.auth === 'merchant' ? { authorization: `Bearer ${apiKey}` } : {},
    );
    const resources = buildNamedResources(merchantContract, invoke);
    resources.webhooks = Object.assign(resources.webhooks ?? {}, helpers);
    Object.assign(this, resources);
  }

  get lastResponse(): ResponseMeta | null {
    return this.#core.lastResponse;
  }
}

/**
 * The merchant API client.
 *
 * ```ts
 * const paycollect = new PaycollectMerchant({ apiKey: process.env.PAYCOLLECT_KEY!, baseUrl: 'https://pay.example.com' });
 * const payment = await paycollect.payments.retrieve(paymentId);
 * payment.lastResponse.requestId;
 * ```
 */
export const PaycollectMerchant = MerchantClient as unknown as new (options: PaycollectMerchantOptions) => PaycollectMerchant;

/** Webhook helpers without a client (a receiver needs only the signing secret). */
export const webhooks: WebhookHelpers = helpers;
