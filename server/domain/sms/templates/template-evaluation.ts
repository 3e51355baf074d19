import type { Mode } from '../../../../contract/vocabulary.ts';
import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import { checkSenders, checkTemplates, getGateway, type GatewayView } from '../../gateways/service.ts';
import type { StoredSmsTemplate } from '../../gateways/entities.ts';
import { getSettings } from '../../settings/service.ts';
import { decryptSmsBody, decryptSmsSender, smsRowBinding, textKept } from '../intake/record-cipher.ts';
import { transaction, type Db } from '../../db.ts';
import { loadCandidates } from '../matching/candidates.ts';
import { chooseMatch, type ChainState, type MatchRules } from '../matching/matcher.ts';
import { MAX_SMS_BODY_LENGTH, normalizeParsedAmount, parseSms, type GatewayParseConfig, type ParsedSms } from './parser.ts';
import { compileTemplate, type SmsTemplateSource } from './template.ts';
import { expandPreset } from './presets/gateway-input.ts';
import { recentOriginals } from './queries.ts';
import { sameSender } from './senders.ts';
import { maskPayerNumber } from '../matching/payer-number.ts';
import { recordAudit, type AuditActor } from '../../audit/service.ts';
import { declaredPayerNumber } from '../matching/service.ts';

/**
 * What a change of a gateway's templates (or senders) would do before it goes
 * live: every stored SMS of the last `days` days from the gateway's official
 * senders is parsed with the current and with the proposed templates, and the
 * pure matcher is run against today's candidates for the readings that differ.
 * Nothing is written. Bodies are decrypted in memory only, never logged or
 * returned: the answer carries what the parser read, not the text.
 */

/** Defaults of one evaluation (the contract bounds both): each decrypts and parses every record it scans. */
const EVALUATION_DEFAULT_DAYS = 7;
const EVALUATION_DEFAULT_MESSAGES = 1000;

type ParseChange = 'unchanged' | 'newly_parsed' | 'stops_parsing' | 'changed';

interface ParseView {
  direction: 'in' | 'out';
  kind: string | null;
  amount: string;
  trx_id: string | null;
  sender_number: string | null;
  balance: string | null;
  fee: string | null;
  template_index: number;
}

interface MessageEvaluation {
  sms_record_id: number;
  brand_id: number;
  sms_time: string;
  change: Exclude<ParseChange, 'unchanged'>;
  /** Fields read differently (for `changed`). */
  changed_fields: string[];
  current: ParseView | null;
  proposed: ParseView | null;
}

type SampleMissCode = 'too_long' | 'sender_not_official' | 'no_templates' | 'no_template_matched' | 'amount_unreadable' | 'trx_id_missing';

/** Why the proposed templates read nothing of a sample, said so a person can act on it. */
interface SampleMiss {
  code: SampleMissCode;
  /** The template that came closest (its pattern matched, a group it needs did not read), or null. */
  template_index: number | null;
  message: string;
}

interface SampleEvaluation {
  index: number;
  change: ParseChange;
  changed_fields: string[];
  current: ParseView | null;
  proposed: ParseView | null;
  /** Set exactly when `proposed` is null. */
  proposed_miss: SampleMiss | null;
}

interface PaymentEffect {
  transaction_id: number;
  brand_id: number;
  sms_record_id: number;
}

export interface TemplateEvaluation {
  gateway: string;
  days: number;
  limit: number;
  since: string;
  /** Records read (all senders); `truncated` when the limit cut the window short. */
  scanned: number;
  truncated: boolean;
  counts: { evaluated: number; unchanged: number; newly_parsed: number; stops_parsing: number; changed: number };
  /** Only the messages read differently, newest first. */
  messages: MessageEvaluation[];
  samples: SampleEvaluation[];
  payments: { would_complete: PaymentEffect[]; would_stop_completing: PaymentEffect[] };
}

interface TemplateProposal {
  sms_senders?: string[];
  sms_templates?: SmsTemplateSource[];
  preset?: string;
}

/** The gateway's parse configuration after `p` (same rules as a PATCH: a preset replaces both lists). */
function proposedConfig(current: GatewayView, p: TemplateProposal): GatewayParseConfig {
  const normalized = (p.sms_templates ?? []).map((t) => ({ pattern: t.pattern, flags: t.flags ?? '', direction: t.direction ?? ('in' as const), ...(t.kind ? { kind: t.kind } : {}) }));
  if (p.preset !== undefined) {
    const e = expandPreset(p.preset, p.sms_senders ?? [], normalized);
    checkSenders(e.sms_senders);
    checkTemplates(e.sms_templates as StoredSmsTemplate[]);
    return { id: current.id, senders: e.sms_senders, templates: e.sms_templates };
  }
  const senders = p.sms_senders ?? current.smsSenders;
  const templates = p.sms_templates ? normalized : current.smsTemplates;
  if (p.sms_senders) checkSenders(senders);
  if (p.sms_templates) checkTemplates(templates);
  return { id: current.id, senders, templates };
}

export function currentConfig(g: GatewayView): GatewayParseConfig {
  return { id: g.id, senders: g.smsSenders, templates: g.smsTemplates };
}

/** What an answer shows: the payer number masked as every admin answer does (compared unmasked). */
function shown(v: ParseView | null): ParseView | null {
  return v && v.sender_number !== null ? { ...v, sender_number: maskPayerNumber(v.sender_number) } : v;
}

function view(p: ParsedSms | null): ParseView | null {
  if (!p) return null;
  return { direction: p.direction, kind: p.kind, amount: p.amount, trx_id: p.trxId, sender_number: p.senderNumber, balance: p.balance, fee: p.fee, template_index: p.templateIndex };
}

const COMPARED: Array<keyof ParseView> = ['direction', 'kind', 'amount', 'trx_id', 'sender_number', 'balance', 'fee'];

/** How the proposed reading differs from the current one (the template index alone is no change). */
function compareParses(a: ParseView | null, b: ParseView | null): { change: ParseChange; fields: string[] } {
  if (!a && !b) return { change: 'unchanged', fields: [] };
  if (!a) return { change: 'newly_parsed', fields: [] };
  if (!b) return { change: 'stops_parsing', fields: [] };
  const fields = COMPARED.filter((k) => a[k] !== b[k]);
  return { change: fields.length ? 'changed' : 'unchanged', fields };
}


/** The transaction the pure matcher would complete with `p`, or null. Reads candidates, writes nothing. */
async function wouldComplete(
  em: Db,
  cipher: PiiCipher,
  rec: { brandId: number; mode: Mode; smsTime: Date; chainState: ChainState },
  p: ParsedSms | null,
  rules: MatchRules,
): Promise<number | null> {
  if (!p || p.direction !== 'in' || p.trxId === null) return null;
  const rows = await loadCandidates(em, { brandId: rec.brandId, mode: rec.mode, gatewayIds: [p.gatewayId], trxId: p.trxId, amount: p.amount, smsTime: rec.smsTime, windowMinutes: rules.windowMinutes });
  const candidates = rows.map((c) => ({ ...c, payerNumber: declaredPayerNumber(cipher, c) }));
  const result = chooseMatch({ sms: { amount: p.amount, trxId: p.trxId, senderNumber: p.senderNumber, time: rec.smsTime, chainState: rec.chainState }, candidates, rules });
  return result.status === 'matched' ? result.transactionId : null;
}

/**
 * Why `config` reads nothing of a sample (parseSms said null): the checks
 * parseSms makes, in its order, named. A template whose pattern matched but
 * whose amount or (money in) trx id did not read is the closest one; the first
 * such wins.
 */
export function sampleMiss(sms: { sender: string; body: string }, config: GatewayParseConfig): SampleMiss {
  if (sms.body.length > MAX_SMS_BODY_LENGTH) return { code: 'too_long', template_index: null, message: `The text is longer than ${MAX_SMS_BODY_LENGTH} characters; no real SMS is.` };
  if (!config.senders.some((s) => sameSender(s, sms.sender))) {
    return { code: 'sender_not_official', template_index: null, message: `"${sms.sender}" is not one of the official senders (${config.senders.join(', ') || 'none set'}): its SMS are never read.` };
  }
  if (config.templates.length === 0) return { code: 'no_templates', template_index: null, message: 'The gateway has no SMS templates.' };
  for (const [i, t] of config.templates.entries()) {
    let groups: Record<string, string | undefined> | undefined;
    try {
      groups = compileTemplate(t.pattern, t.flags ?? '', t.direction ?? 'in').exec(sms.body)?.groups;
    } catch {
      continue;
    }
    if (!groups) continue;
    if (normalizeParsedAmount(groups['amount']) === null) {
      const raw = groups['amount']?.trim();
      return { code: 'amount_unreadable', template_index: i, message: raw ? `Template ${i + 1} matched, but its amount "${raw}" is not a valid amount.` : `Template ${i + 1} matched, but read no amount.` };
    }
    if ((t.direction ?? 'in') === 'in' && !groups['trx_id']?.trim()) {
      return { code: 'trx_id_missing', template_index: i, message: `Template ${i + 1} matched, but read no transaction id (a payment needs one).` };
    }
  }
  return { code: 'no_template_matched', template_index: null, message: `None of the ${config.templates.length} templates matches this text.` };
}

export interface EvaluationInput extends TemplateProposal {
  days?: number;
  limit?: number;
  samples?: Array<{ sender?: string; body: string }>;
}

/**
 * Evaluates `input` against the gateway's current templates, over the SMS of
 * the brands in `brands` (null: every brand), and records who read them: the
 * answer carries what the parser read of real messages. Throws what a PATCH
 * with the same fields would.
 */
export async function evaluateTemplates(
  em: Db,
  cipher: PiiCipher,
  who: AuditActor,
  code: string,
  input: EvaluationInput,
  brands: number[] | null,
): Promise<TemplateEvaluation> {
  return transaction(em, async (tx) => {
    const gateway = await getGateway(tx, code);
    const result = await evaluateConfigs(tx, cipher, gateway, currentConfig(gateway), proposedConfig(gateway, input), { ...input, brands });
    await recordAudit(tx, who, {
      action: 'gateway.evaluate_templates',
      targetType: 'gateway',
      targetId: gateway.code,
      after: { days: result.days, scanned: result.scanned, evaluated: result.counts.evaluated, messages: result.messages.length, samples: result.samples.length, brands: brands ?? null },
    });
    return result;
  });
}

export async function evaluateConfigs(
  em: Db,
  cipher: PiiCipher,
  gateway: GatewayView,
  before: GatewayParseConfig,
  after: GatewayParseConfig,
  opts: { days?: number; limit?: number; samples?: Array<{ sender?: string; body: string }>; brands?: number[] | null },
): Promise<TemplateEvaluation> {
  const days = opts.days ?? EVALUATION_DEFAULT_DAYS;
  const limit = opts.limit ?? EVALUATION_DEFAULT_MESSAGES;
  const settings = await getSettings(em);
  const rules: MatchRules = { windowMinutes: settings.match_window_minutes, graceSeconds: settings.match_clock_grace_seconds, reviewAbove: gateway.reviewAbove };

  const rows = await recentOriginals(em, days, limit, opts.brands ?? null);
  const truncated = rows.length > limit;
  const counts = { evaluated: 0, unchanged: 0, newly_parsed: 0, stops_parsing: 0, changed: 0 };
  const messages: MessageEvaluation[] = [];
  const wouldCompleteList: PaymentEffect[] = [];
  const wouldStop: PaymentEffect[] = [];

  for (const row of rows.slice(0, limit)) {
    const binding = smsRowBinding(row);
    const sender = decryptSmsSender(cipher, textKept(row.sender), binding);
    const official = (c: GatewayParseConfig) => c.senders.some((s) => sameSender(s, sender));
    if (!official(before) && !official(after)) continue;
    const body = decryptSmsBody(cipher, textKept(row.body_encrypted), binding);
    const a = parseSms({ sender, body }, [before]);
    const b = parseSms({ sender, body }, [after]);
    counts.evaluated++;
    const { change, fields } = compareParses(view(a), view(b));
    counts[change]++;
    if (change === 'unchanged') continue;
    const rec = { brandId: row.brand_id, mode: row.mode, smsTime: row.sms_time, chainState: row.chain_state };
    messages.push({ sms_record_id: row.id, brand_id: rec.brandId, sms_time: rec.smsTime.toISOString(), change, changed_fields: fields, current: shown(view(a)), proposed: shown(view(b)) });
    const [was, will] = [await wouldComplete(em, cipher, rec, a, rules), await wouldComplete(em, cipher, rec, b, rules)];
    if (will !== null && will !== was) wouldCompleteList.push({ transaction_id: will, brand_id: rec.brandId, sms_record_id: row.id });
    if (was !== null && will !== was) wouldStop.push({ transaction_id: was, brand_id: rec.brandId, sms_record_id: row.id });
  }

  // A pasted sample is parsed in memory only; without a sender it is taken to come from the first official one.
  const samples = (opts.samples ?? []).map((s, index): SampleEvaluation => {
    const sender = s.sender ?? after.senders[0] ?? before.senders[0] ?? '';
    const a = view(parseSms({ sender, body: s.body }, [before]));
    const b = view(parseSms({ sender, body: s.body }, [after]));
    const { change, fields } = compareParses(a, b);
    return { index, change, changed_fields: fields, current: shown(a), proposed: shown(b), proposed_miss: b ? null : sampleMiss({ sender, body: s.body }, after) };
  });

  return {
    gateway: gateway.code,
    days,
    limit,
    since: new Date(Date.now() - days * 86_400_000).toISOString(),
    scanned: Math.min(rows.length, limit),
    truncated,
    counts,
    messages,
    samples,
    payments: { would_complete: wouldCompleteList, would_stop_completing: wouldStop },
  };
}
