import { z } from 'zod';
import { AppError } from '../../../contract/common/errors.ts';
import { sql, type UpdateObject } from 'kysely';
import { type DB, type Db } from '../db.ts';
import { compareMoney } from '../money/decimal.ts';
import { checkAgainstMoneyOut, expandPreset } from '../sms/wording.ts';
import { senderKey } from '../sms/wording.ts';
import { compileTemplate } from '../sms/wording.ts';
import { bumpSenderEpoch } from '../filter-rules/sender-epoch.ts';
import { gatewayInputSchema, gatewayPatchSchema } from '../../../contract/admin/gateways.ts';
import type { FeePayer, GatewayType, StoredSmsTemplate } from './entities.ts';
import { isUniqueViolation } from '../../infra/database/database.ts';
import { gatewayByCode, gatewaysInOrder, insertGateway, updateGatewayByCode, type GatewayRow } from './queries.ts';

/**
 * Gateways are global: one list for the whole service, every enabled gateway is
 * offered to every brand. (Per-brand gateways would need per-brand receiving
 * accounts and SMS senders; README.md, Merchant API: gateways are global.)
 */
export interface GatewayView {
  id: number;
  code: string;
  name: string;
  type: GatewayType;
  methods: string[];
  /** The first is the gateway's own currency: amounts in other currencies are converted into it. */
  currencies: string[];
  minAmount: string;
  maxAmount: string | null;
  reviewAbove: string | null;
  /** Percent, e.g. "1.85" for 1.85 %. */
  feePercent: string;
  feeFixed: string;
  /** Who pays the fee: `customer` sends amount + fee, `merchant` absorbs it (the customer sends the amount). */
  feePayer: FeePayer;
  receivingAccount: string | null;
  instructions: string | null;
  enabled: boolean;
  smsSenders: string[];
  smsTemplates: StoredSmsTemplate[];
  sortOrder: number;
  createdAt: Date;
  updatedAt: Date;
}

export type GatewayInput = z.input<typeof gatewayInputSchema>;
export type GatewayPatch = z.input<typeof gatewayPatchSchema>;

function fail(error: z.ZodError): never {
  throw new AppError('VALIDATION_ERROR', error.issues[0]?.message ?? 'Invalid gateway', {
    details: error.issues.map((i) => ({ code: 'VALIDATION_ERROR' as const, message: i.message, field: i.path.join('.') || null })),
  });
}

/**
 * Templates must compile and carry the groups the parser reads (INVALID_SMS_TEMPLATE
 * naming the index), and a money-in template must not read any wallet's own
 * money-out message as a credit (VALIDATION_ERROR naming the index).
 */
export function checkTemplates(templates: StoredSmsTemplate[]): void {
  templates.forEach((t, i) => {
    try {
      compileTemplate(t.pattern, t.flags, t.direction ?? 'in');
    } catch (err) {
      if (err instanceof AppError) throw new AppError('INVALID_SMS_TEMPLATE', err.message, { field: `sms_templates.${i}.pattern` });
      throw err;
    }
  });
  checkAgainstMoneyOut(templates);
}

/** A sender that can equal nothing (non-ASCII, control characters) would silently never verify. */
export function checkSenders(senders: readonly string[]): void {
  senders.forEach((s, i) => {
    if (senderKey(s) === null) {
      throw new AppError('VALIDATION_ERROR', 'SMS sender ids are printable ASCII names or phone numbers', { field: `sms_senders.${i}` });
    }
  });
}

function checkLimits(min: string, max: string | null): void {
  if (max !== null && compareMoney(max, min) < 0) {
    throw new AppError('VALIDATION_ERROR', 'max_amount must not be below min_amount', { field: 'max_amount' });
  }
}

/** A gateways row as the typed builder reads it (db.ts: dates as Date, money as decimal strings). */
export type { GatewayRow };

/** "1.8500" -> "1.85", "2.0000" -> "2". */
function trimPercent(p: string): string {
  return p.includes('.') ? p.replace(/0+$/, '').replace(/\.$/, '') : p;
}

/** The fields of a gateway a price quote reads (gateways/quote.ts), with its type (which mode it serves). */
export type QuotableGateway = Pick<GatewayView, 'type' | 'currencies' | 'minAmount' | 'maxAmount' | 'feePercent' | 'feeFixed' | 'feePayer'>;

/** The columns of a QuotableGateway: what an intent creation loads of each enabled gateway, not its templates. */
export const QUOTABLE_COLUMNS = ['type', 'currencies', 'min_amount', 'max_amount', 'fee_percent', 'fee_fixed', 'fee_payer'] as const;

export function toQuotableGateway(r: Pick<GatewayRow, (typeof QUOTABLE_COLUMNS)[number]>): QuotableGateway {
  return {
    type: r.type,
    currencies: r.currencies,
    minAmount: r.min_amount,
    maxAmount: r.max_amount,
    feePercent: trimPercent(r.fee_percent),
    feeFixed: r.fee_fixed,
    feePayer: r.fee_payer,
  };
}

export function toGatewayView(r: GatewayRow): GatewayView {
  return {
    id: Number(r.id),
    code: r.code,
    name: r.name,
    type: r.type,
    methods: r.methods,
    currencies: r.currencies,
    minAmount: r.min_amount,
    maxAmount: r.max_amount,
    reviewAbove: r.review_above,
    feePercent: trimPercent(r.fee_percent),
    feeFixed: r.fee_fixed,
    feePayer: r.fee_payer,
    receivingAccount: r.receiving_account,
    instructions: r.instructions,
    enabled: r.enabled,
    smsSenders: r.sms_senders,
    smsTemplates: r.sms_templates,
    sortOrder: r.sort_order,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export async function createGateway(em: Db, input: GatewayInput): Promise<GatewayView> {
  const parsed = gatewayInputSchema.safeParse(input);
  if (!parsed.success) fail(parsed.error);
  const g = { ...parsed.data, ...expandPreset(parsed.data.preset, parsed.data.sms_senders, parsed.data.sms_templates) };
  checkLimits(g.min_amount, g.max_amount);
  checkSenders(g.sms_senders);
  checkTemplates(g.sms_templates);
  try {
    if (g.enabled && g.sms_senders.length > 0) await bumpSenderEpoch(em);
    const row = await insertGateway(em, {
      code: g.code, name: g.name, type: g.type, methods: [...g.methods], currencies: [...g.currencies], min_amount: g.min_amount,
      max_amount: g.max_amount, fee_percent: g.fee_percent, fee_fixed: g.fee_fixed, receiving_account: g.receiving_account, instructions: g.instructions,
      enabled: g.enabled, sms_senders: [...g.sms_senders], sms_templates: g.sms_templates, sort_order: g.sort_order, review_above: g.review_above,
      fee_payer: g.fee_payer,
    });
    return toGatewayView(row);
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError('CONFLICT', `A gateway with code "${g.code}" already exists`, { field: 'code' });
    }
    throw err;
  }
}

/** Changes the given fields only (a field absent from the patch keeps its value). */
export async function updateGateway(em: Db, code: string, patch: GatewayPatch): Promise<GatewayView> {
  // Defaults must not fill absent fields of a patch, so parse with the raw keys only.
  const parsed = gatewayPatchSchema.safeParse(patch);
  if (!parsed.success) fail(parsed.error);
  const current = await getGateway(em, code);
  const data = parsed.data as Record<string, unknown>;
  if (parsed.data.preset !== undefined) {
    // A preset replaces the senders and templates; templates the admin gives come after the preset's.
    Object.assign(data, expandPreset(parsed.data.preset, parsed.data.sms_senders ?? [], parsed.data.sms_templates ?? []));
  }
  const raw = Object.keys(patch).filter((k) => k !== 'preset');
  if (parsed.data.preset !== undefined) raw.push('sms_senders', 'sms_templates');
  const given = [...new Set(raw)] as Array<Exclude<keyof z.output<typeof gatewayPatchSchema>, 'preset'>>;
  const min = given.includes('min_amount') ? (data.min_amount as string) : current.minAmount;
  const max = given.includes('max_amount') ? (data.max_amount as string | null) : current.maxAmount;
  checkLimits(min, max);
  if (given.includes('sms_senders')) checkSenders(data.sms_senders as string[]);
  if (given.includes('sms_templates')) checkTemplates(data.sms_templates as StoredSmsTemplate[]);
  if (given.length === 0) return current;
  const enabledAfter = given.includes('enabled') ? (data.enabled as boolean) : current.enabled;
  const sendersAfter = given.includes('sms_senders') ? (data.sms_senders as string[]) : current.smsSenders;
  const sendersChanged = enabledAfter !== current.enabled || sendersAfter.join('\n') !== current.smsSenders.join('\n');
  // The phones' allowed senders follow the enabled gateways' senders (filter-rules/service.ts).
  if (sendersChanged) await bumpSenderEpoch(em);
  const set: UpdateObject<DB, 'gateways'> = { updated_at: sql<Date>`now()` };
  for (const key of given) {
    const value = data[key];
    if (key === 'methods' || key === 'currencies' || key === 'sms_senders') set[key] = [...value as string[]];
    else Object.assign(set, { [key]: value });
  }
  const row = await updateGatewayByCode(em, code, set);
  if (!row) throw new AppError('GATEWAY_NOT_FOUND');
  return toGatewayView(row);
}

export async function getGateway(em: Db, code: string): Promise<GatewayView> {
  const row = await gatewayByCode(em, code);
  if (!row) throw new AppError('GATEWAY_NOT_FOUND');
  return toGatewayView(row);
}

/** In display order (sort_order, then id). */
export async function listGateways(em: Db, opts: { enabledOnly?: boolean } = {}): Promise<GatewayView[]> {
  return (await gatewaysInOrder(em, opts)).map(toGatewayView);
}
