import { convertWith, loadRates, type RateRow } from '../fx/service.ts';
import { addMoney, compareMoney, computeFee } from '../money/decimal.ts';
import { listGateways, type GatewayView, type QuotableGateway } from './service.ts';
import type { Db } from '../db.ts';

export type QuoteRefusal = 'CURRENCY_CONVERSION_FAILED' | 'AMOUNT_BELOW_MINIMUM' | 'AMOUNT_EXCEEDS_MAXIMUM';

/** What paying a given amount on one gateway would look like. */
export interface GatewayQuote<G extends QuotableGateway = GatewayView> {
  gateway: G;
  /** Null when the gateway can take the payment; otherwise the error code that explains why not. */
  refusal: QuoteRefusal | null;
  /** Amount charged on the gateway (converted when needed); null when no rate exists. */
  amount: string | null;
  /** The currency charged; when no rate exists, the gateway's first (for display only). */
  currency: string;
  fee: string | null;
  /**
   * The one number the customer sends and the wallet SMS must carry: the amount
   * when the merchant pays the fee, amount + fee when the customer does.
   */
  toSend: string | null;
  /** Rate used (target per source unit), null without conversion. */
  exchangeRate: string | null;
  converted: boolean;
}

/**
 * Pure: the currency a gateway charges an intent in, among every currency it
 * takes: the intent's own when it takes it; else the first (in the gateway's
 * listed order) with a direct rate from the intent's currency; else the first
 * with an inverse rate; null when no rate reaches any of them. Deterministic:
 * the same gateway, currency and rates always give the same answer.
 */
export function chargeCurrency(gateway: Pick<GatewayView, 'currencies'>, currency: string, rates: readonly RateRow[]): string | null {
  if (gateway.currencies.includes(currency)) return currency;
  const direct = gateway.currencies.find((c) => rates.some((r) => r.base === currency && r.quote === c));
  if (direct) return direct;
  return gateway.currencies.find((c) => rates.some((r) => r.base === c && r.quote === currency)) ?? null;
}

/** Every currency these gateways take: the targets a conversion from the intent's currency may need. */
export function currenciesOf(gateways: ReadonlyArray<Pick<GatewayView, 'currencies'>>): string[] {
  return [...new Set(gateways.flatMap((g) => g.currencies))];
}

/**
 * Pure: converts into the gateway's charge currency (direct rate, else inverse,
 * rounded half-up once), then checks the gateway's limits on the converted
 * amount and computes the fee (percent plus fixed) on it.
 */
export function quoteGateway<G extends QuotableGateway>(gateway: G, amount: string, currency: string, rates: readonly RateRow[]): GatewayQuote<G> {
  const target = chargeCurrency(gateway, currency, rates);
  const conversion = target === null ? null : convertWith(rates, amount, currency, target);
  if (!conversion) {
    return { gateway, refusal: 'CURRENCY_CONVERSION_FAILED', amount: null, currency: gateway.currencies[0]!, fee: null, toSend: null, exchangeRate: null, converted: true };
  }
  const charged = conversion.amount;
  let refusal: QuoteRefusal | null = null;
  if (compareMoney(charged, gateway.minAmount) < 0) refusal = 'AMOUNT_BELOW_MINIMUM';
  else if (gateway.maxAmount !== null && compareMoney(charged, gateway.maxAmount) > 0) refusal = 'AMOUNT_EXCEEDS_MAXIMUM';
  const fee = computeFee(charged, gateway.feePercent, gateway.feeFixed);
  return {
    gateway,
    refusal,
    amount: charged,
    currency: conversion.currency,
    fee,
    toSend: gateway.feePayer === 'customer' ? addMoney(charged, fee) : charged,
    exchangeRate: conversion.rate,
    converted: conversion.direction !== 'none',
  };
}

/** The honest reason no rate reaches a gateway: names every currency it takes. */
export function noRateMessage(currency: string, gateways: ReadonlyArray<Pick<GatewayView, 'currencies'>>): string {
  const targets = currenciesOf(gateways);
  return targets.length === 1
    ? `No exchange rate converts ${currency} into ${targets[0]}`
    : `No exchange rate converts ${currency} into any of ${targets.join(', ')}`;
}

/** Quotes for every enabled gateway, in display order (what the checkout page shows). */
export async function quoteGateways(em: Db, amount: string, currency: string): Promise<GatewayQuote[]> {
  return quoteGatewaysOf(em, await listGateways(em, { enabledOnly: true }), amount, currency);
}

/** Quotes for these gateways (already loaded: `listGateways(em, { enabledOnly: true })`); reads exchange rates only when a conversion is needed. */
export async function quoteGatewaysOf<G extends QuotableGateway>(em: Db, gateways: readonly G[], amount: string, currency: string): Promise<Array<GatewayQuote<G>>> {
  const needRates = gateways.filter((g) => !g.currencies.includes(currency));
  const rates = needRates.length ? await loadRates(em, currency, currenciesOf(needRates)) : [];
  return gateways.map((g) => quoteGateway(g, amount, currency, rates));
}

/**
 * Pure: why no gateway could ever take this payment, or null when at least one can
 * (or none is configured yet, so there is nothing to judge against).
 * Above the maximum of every gateway that can convert the currency:
 * AMOUNT_EXCEEDS_MAXIMUM; no gateway can convert it: CURRENCY_CONVERSION_FAILED;
 * otherwise below the minimum somewhere: AMOUNT_BELOW_MINIMUM.
 */
export function intentRefusal(quotes: ReadonlyArray<Pick<GatewayQuote<QuotableGateway>, 'refusal'>>): QuoteRefusal | null {
  if (quotes.length === 0 || quotes.some((q) => q.refusal === null)) return null;
  const reachable = quotes.filter((q) => q.refusal !== 'CURRENCY_CONVERSION_FAILED');
  if (reachable.length === 0) return 'CURRENCY_CONVERSION_FAILED';
  if (reachable.every((q) => q.refusal === 'AMOUNT_EXCEEDS_MAXIMUM')) return 'AMOUNT_EXCEEDS_MAXIMUM';
  return 'AMOUNT_BELOW_MINIMUM';
}
