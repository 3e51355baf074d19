import { AppError } from '../../../contract/common/errors.ts';
import { lockKey, type Db } from '../db.ts';
import { lockGateway } from './queries.ts';
import { withAudit, type AuditActor, type AuditState } from '../audit/service.ts';
import { createGateway, getGateway, updateGateway, type GatewayInput, type GatewayPatch, type GatewayView } from './service.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { currentConfig, evaluateConfigs } from '../sms/index.ts';
import { deleteExchangeRate, listExchangeRates, setExchangeRate, type ExchangeRateView } from '../fx/service.ts';

/**
 * What the audit log keeps of a gateway: what decides which payments it takes,
 * what they cost and which SMS can verify them. Not the receiving account or
 * instructions (free text), and templates only by count.
 */
function gatewayAuditState(g: GatewayView): AuditState {
  return {
    enabled: g.enabled,
    type: g.type,
    currencies: g.currencies,
    min_amount: g.minAmount,
    max_amount: g.maxAmount,
    review_above: g.reviewAbove,
    fee_percent: g.feePercent,
    fee_fixed: g.feeFixed,
    fee_payer: g.feePayer,
    sms_senders: g.smsSenders,
    sms_templates: g.smsTemplates.length,
  };
}

const sameState = (a: AuditState, b: AuditState) => JSON.stringify(a) === JSON.stringify(b);

export async function createGatewayAudited(em: Db, who: AuditActor, input: GatewayInput): Promise<GatewayView> {
  return withAudit(em, who, async (tx) => {
    const g = await createGateway(tx, input);
    return { result: g, audit: { action: 'gateway.create', targetType: 'gateway', targetId: g.code, after: gatewayAuditState(g) } };
  });
}

/** Patch fields that change which SMS the gateway parses: they go through the regression guard. */
const PARSE_FIELDS = ['sms_templates', 'sms_senders', 'preset'] as const;

/**
 * Updates a gateway with the row locked, so concurrent admin edits apply one
 * after the other and each audit row's `before` is what that edit replaced.
 * Recorded when an audited field (limits, fees, currencies, senders, templates,
 * enabled) changed.
 *
 * A change of templates or senders that stops parsing stored SMS that parse
 * today (last EVALUATION_DEFAULT_DAYS days) is refused with TEMPLATE_REGRESSION
 * unless `confirmRegressions`: a wallet's wording drifts, and an admin fixing
 * one template must not silently lose another. The update is applied in the
 * transaction first (so the proposed lists are exactly what would be stored)
 * and rolled back when refused.
 */
export async function updateGatewayAudited(
  em: Db,
  who: AuditActor,
  code: string,
  patch: GatewayPatch,
  guard?: { cipher: PiiCipher; confirmRegressions?: boolean },
): Promise<GatewayView> {
  return withAudit(em, who, async (tx) => {
    if (!(await lockGateway(tx, code))) throw new AppError('GATEWAY_NOT_FOUND');
    const old = await getGateway(tx, code);
    const before = gatewayAuditState(old);
    const g = await updateGateway(tx, code, patch);
    const after: AuditState = gatewayAuditState(g);
    if (guard && PARSE_FIELDS.some((k) => k in patch)) {
      const evaluation = await evaluateConfigs(tx, guard.cipher, old, currentConfig(old), currentConfig(g), {});
      const lost = evaluation.counts.stops_parsing;
      if (lost > 0 && guard.confirmRegressions !== true) {
        throw new AppError(
          'TEMPLATE_REGRESSION',
          `Saving would stop parsing ${lost} stored SMS of the last ${evaluation.days} days that parse today (${evaluation.counts.newly_parsed} newly parsed, ${evaluation.counts.changed} read differently, ${evaluation.payments.would_stop_completing.length} open payment(s) would stop completing); send confirm_regressions: true to save anyway`,
          { field: 'sms_templates' },
        );
      }
      if (lost > 0) after.regressions_confirmed = lost;
    }
    return { result: g, audit: sameState(before, after) ? null : { action: 'gateway.update', targetType: 'gateway', targetId: code, before, after } };
  });
}

const pairId = (base: string, quote: string) => `${base}/${quote}`;

async function findRate(em: Db, base: string, quote: string): Promise<ExchangeRateView | null> {
  return (await listExchangeRates(em)).find((r) => r.base === base && r.quote === quote) ?? null;
}

export async function setExchangeRateAudited(em: Db, who: AuditActor, input: { base: string; quote: string; rate: string }): Promise<ExchangeRateView> {
  return withAudit(em, who, async (tx) => {
    // Serialises concurrent sets of one pair so `before` is exact.
    await lockKey(tx, `exchange_rate:${pairId(input.base, input.quote)}`);
    const before = await findRate(tx, input.base, input.quote);
    const after = await setExchangeRate(tx, input);
    return {
      result: after,
      audit:
        before?.rate === after.rate
          ? null
          : { action: 'exchange_rate.set', targetType: 'exchange_rate', targetId: pairId(after.base, after.quote), before: before ? { rate: before.rate } : null, after: { rate: after.rate } },
    };
  });
}

export async function deleteExchangeRateAudited(em: Db, who: AuditActor, base: string, quote: string): Promise<ExchangeRateView> {
  return withAudit(em, who, async (tx) => {
    await lockKey(tx, `exchange_rate:${pairId(base, quote)}`);
    const before = await findRate(tx, base, quote);
    await deleteExchangeRate(tx, base, quote);
    return { result: before!, audit: { action: 'exchange_rate.delete', targetType: 'exchange_rate', targetId: pairId(base, quote), before: { rate: before!.rate }, after: null } };
  });
}
