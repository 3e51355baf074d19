import type { AppRoute } from '@ts-rest/core';
import { deviceContract } from '../../contract/device/index.ts';
import type { RouteMeta } from '../../contract/common/meta.ts';
import { AuthenticationError, PaycollectError } from '../shared/errors.ts';
import { HttpCore, type ClientOptions, type RequestOptions } from '../shared/http.ts';
import { buildNamedResources, listRoutes, schemaKeys, unwrapEnvelope, type Invoker, type RouteCall } from '../shared/resources.ts';
import type { ResponseMeta, WithResponse } from '../shared/response-meta.ts';
import type { DevicePairingRequest, DeviceResources, DeviceTokenPair } from './api.generated.ts';
import { isTokenExpired, pairingRequired, tokensFromData, type DeviceTokens } from './tokens.ts';
import { SDK_NAME, SDK_VERSION } from './version.ts';

/*
 * The public declarations name only this package's own types (api.generated.ts is
 * generated from the contract): no ts-rest or zod type reaches a consumer's compiler.
 */
export type * from './api.generated.ts';
export * from '../shared/errors.ts';
export { PairingRequiredError, jwtExpiryMs, type DeviceTokens } from './tokens.ts';
export { screenSms, containsKeyword, senderKey, sameSender, type SmsFilterRules, type ScreenResult, type ScreenReason } from './sms-filter.ts';
export type { ClientOptions, RequestOptions, FetchLike } from '../shared/http.ts';
export type { Page, PageMetaLike } from '../shared/pagination.ts';
export type { ResponseMeta, RateLimitInfo, RateLimitQuota, WithResponse } from '../shared/response-meta.ts';
export { joinSmsParts, type JoinableSms, type SmsPartHeader } from './sms-parts.ts';
export { answerBackfillRequests, type BackfillWindow, type CommandsApi } from './backfill.ts';
export { SmsSequencer, screenedRanges, type SmsSequenceState } from './sequence.ts';
export { SDK_VERSION as VERSION };

/** The header the service reads the fingerprint from when it is not in the body. */
export const FINGERPRINT_HEADER = 'x-device-fingerprint';

export interface PaycollectDeviceOptions extends ClientOptions {
  /** Stable hash identifying this phone's hardware; sent when pairing and refreshing. */
  fingerprint: string;
  /** Tokens stored from an earlier run (omit before pairing). */
  tokens?: DeviceTokens | null;
  /**
   * Called with every new token pair (pairing and each refresh) before the call
   * that caused it continues. Persist the pair here: a refresh rotates the refresh
   * token, and presenting the old one again makes the service revoke the device.
   */
  onTokens?: (tokens: DeviceTokens) => void | Promise<void>;
  /** Refresh this long before the access token's `exp`. Default 60 000 ms. */
  refreshMarginMs?: number;
}

export interface DeviceRequestOptions extends RequestOptions {
  /** For calling the pairing route through its namespace method; `pair()` is simpler. */
  pairingCode?: string;
}

/** What `pair()` needs besides the code (the SDK adds the fingerprint). */
export type PairDetails = Omit<DevicePairingRequest, 'fingerprint'>;
export type PairResult = WithResponse<DeviceTokenPair>;

interface DeviceSession {
  readonly baseUrl: string;
  readonly fingerprint: string;
  /**
   * Pairs this device with a one-time code from the merchant panel, stores the
   * token pair (and hands it to `onTokens`). A used, expired or unknown code
   * throws an `AuthenticationError` with code `INVALID_PAIRING_CODE`.
   */
  pair(code: string, details: PairDetails, options?: RequestOptions): Promise<PairResult>;
  /** Rotates the tokens now. Concurrent callers share one refresh. */
  refresh(): Promise<DeviceTokens>;
  getTokens(): DeviceTokens | null;
  setTokens(tokens: DeviceTokens | null): void;
  /** Metadata of the last call that succeeded on this client (request id, rate limits). */
  readonly lastResponse: ResponseMeta | null;
}

/** One namespace per resource of the device contract, plus pairing and token handling. */
export type PaycollectDevice = DeviceResources<DeviceRequestOptions> & DeviceSession;

function authOf(route: AppRoute): RouteMeta['auth'] | undefined {
  return (route.metadata as RouteMeta | undefined)?.auth;
}

class DeviceClient {
  readonly baseUrl: string;
  readonly fingerprint: string;
  #core: HttpCore;
  #tokens: DeviceTokens | null;
  #onTokens: PaycollectDeviceOptions['onTokens'];
  #refreshing: Promise<DeviceTokens> | null = null;
  #clockOffsetMs = 0;
  #marginMs: number;
  #pairingRoute: AppRoute | undefined;
  #refreshRoute: AppRoute | undefined;

  constructor(options: PaycollectDeviceOptions) {
    if (typeof options?.fingerprint !== 'string' || options.fingerprint.trim() === '') {
      throw new TypeError('fingerprint is required: new PaycollectDevice({ baseUrl, fingerprint })');
    }
    this.#core = new HttpCore(options, { name: SDK_NAME, version: SDK_VERSION });
    this.baseUrl = this.#core.baseUrl;
    this.fingerprint = options.fingerprint;
    this.#tokens = options.tokens ?? null;
    this.#onTokens = options.onTokens;
    this.#marginMs = options.refreshMarginMs ?? 60_000;
    const routes = listRoutes(deviceContract);
    this.#pairingRoute = routes.find((r) => authOf(r.route) === 'pairing')?.route;
    this.#refreshRoute = routes.find((r) => authOf(r.route) === 'device-refresh')?.route;
    const invoke: Invoker<DeviceRequestOptions> = (call) => this.#invoke(call);
    Object.assign(this, buildNamedResources(deviceContract, invoke));
  }

  get lastResponse(): ResponseMeta | null {
    return this.#core.lastResponse;
  }

  getTokens(): DeviceTokens | null {
    return this.#tokens ? { ...this.#tokens } : null;
  }

  setTokens(tokens: DeviceTokens | null): void {
    this.#tokens = tokens ? { ...tokens } : null;
  }

  async pair(code: string, details: PairDetails, options: RequestOptions = {}): Promise<PairResult> {
    const route = this.#pairingRoute;
    if (!route) throw new Error('This service contract has no pairing route');
    if (typeof code !== 'string' || code.trim() === '') throw new TypeError('pair: the pairing code is required');
    const body = unwrapEnvelope(
      await this.#invoke({ route, name: 'pair', path: route.path, body: details ?? {}, options: { ...options, pairingCode: code.trim() } }),
    );
    return body as PairResult;
  }

  refresh(): Promise<DeviceTokens> {
    this.#refreshing ??= this.#doRefresh().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  async #invoke(call: RouteCall<DeviceRequestOptions>): Promise<unknown> {
    const auth = authOf(call.route);
    if (auth === 'device') return this.#authorized(call);
    const { pairingCode, ...options } = call.options;
    const headers: Record<string, string> = {};
    let body = call.body;
    if (auth === 'pairing' || auth === 'device-refresh') {
      headers[FINGERPRINT_HEADER] = this.fingerprint;
      body = this.#withFingerprint(call.route, body);
    }
    if (auth === 'pairing') {
      if (!pairingCode) throw new TypeError(`${call.name}: pass the pairing code as options.pairingCode, or use pair(code, details)`);
      headers.authorization = `Bearer ${pairingCode}`;
    }
    const res = await this.#core.send({ route: call.route, path: call.path, query: call.query, body, headers, options });
    if (auth === 'pairing' || auth === 'device-refresh') await this.#store(unwrapEnvelope(res.body));
    return res.body;
  }

  #withFingerprint(route: AppRoute, body: unknown): unknown {
    if (!schemaKeys((route as { body?: unknown }).body).includes('fingerprint')) return body;
    return { fingerprint: this.fingerprint, ...(body as object | undefined) };
  }

  async #store(data: unknown): Promise<DeviceTokens> {
    const found = tokensFromData(data);
    if (!found) throw new PaycollectError({ code: 'UNEXPECTED_RESPONSE', message: 'The token response carried no token pair' });
    this.#tokens = found.tokens;
    if (found.serverTime !== null) this.#clockOffsetMs = found.serverTime - Date.now();
    // Awaited before any caller goes on: a rotated pair the app failed to keep is a revoked device later.
    await this.#onTokens?.({ ...found.tokens });
    return { ...found.tokens };
  }

  /** A device call: fresh access token first, and one refresh-and-retry on 401. */
  async #authorized(call: RouteCall<DeviceRequestOptions>): Promise<unknown> {
    const { pairingCode: _ignored, ...options } = call.options;
    const send = (accessToken: string) =>
      this.#core.send({ route: call.route, path: call.path, query: call.query, body: call.body, headers: { authorization: `Bearer ${accessToken}` }, options });

    if (this.#refreshing) await this.#refreshing;
    let used = this.#tokens?.accessToken;
    if (!used) throw pairingRequired();
    if (isTokenExpired(used, Date.now(), this.#clockOffsetMs, this.#marginMs)) {
      await this.#refreshReplacing(used);
      used = this.#tokens!.accessToken;
    }
    try {
      return (await send(used)).body;
    } catch (err) {
      // A 401 is answered before any work is done, so repeating it once with a fresh token is safe for every route.
      if (!(err instanceof AuthenticationError) || err.code !== 'UNAUTHORIZED' || !this.#tokens?.refreshToken) throw err;
      await this.#refreshReplacing(used);
      return (await send(this.#tokens!.accessToken)).body;
    }
  }

  /** Refreshes unless another call already replaced `stale` (then its result is used). */
  async #refreshReplacing(stale: string): Promise<void> {
    if (this.#tokens && this.#tokens.accessToken !== stale) return;
    await this.refresh();
  }

  async #doRefresh(): Promise<DeviceTokens> {
    const route = this.#refreshRoute;
    if (!route) throw new Error('This service contract has no token refresh route');
    const refreshToken = this.#tokens?.refreshToken;
    if (!refreshToken) throw pairingRequired();
    const inBody = schemaKeys((route as { body?: unknown }).body).includes('refresh_token');
    const headers: Record<string, string> = { [FINGERPRINT_HEADER]: this.fingerprint };
    if (!inBody) headers.authorization = `Bearer ${refreshToken}`;
    const body = this.#withFingerprint(route, inBody ? { refresh_token: refreshToken } : undefined);
    let res;
    try {
      res = await this.#core.send({ route, path: route.path, body, headers });
    } catch (err) {
      if (err instanceof PaycollectError && err.code === 'INVALID_PAIRING_CODE') {
        this.#tokens = null;
        throw pairingRequired(err);
      }
      throw err;
    }
    return this.#store(unwrapEnvelope(res.body));
  }
}

/**
 * The companion device API client.
 *
 * ```ts
 * const device = new PaycollectDevice({ baseUrl, fingerprint, tokens: await load(), onTokens: save });
 * if (!device.getTokens()) await device.pair(code, { name: 'Shop phone' });
 * ```
 */
export const PaycollectDevice = DeviceClient as unknown as new (options: PaycollectDeviceOptions) => PaycollectDevice;
