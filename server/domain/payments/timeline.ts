import { AppError } from '../../../contract/common/errors.ts';
import type { TimelineKind } from '../../../contract/vocabulary.ts';
import { type Db } from '../db.ts';
import { timelineParts, timelineTransaction } from './queries/timeline.ts';

export interface TimelineEntry {
  at: string;
  kind: TimelineKind;
  title: string;
  status: string | null;
  actor: string | null;
  /** What the person deciding wrote (verify note, reject reason, an SMS record's resolution note). */
  note: string | null;
  ref: { type: 'sms_record' | 'webhook_delivery' | 'refund' | 'audit_entry'; id: number } | null;
}

const AUDIT_TITLES: Record<string, string> = {
  'transaction.verify': 'Verified by hand',
  'transaction.reject': 'Rejected by hand',
  'transaction.replace_gateway_trx_id': 'The customer replaced the trx id',
};

/** The audit row's own words: a corrected claim names both ids, an accepted amount the SMS's. */
function auditTitle(action: string, after: unknown): string {
  const base = AUDIT_TITLES[action] ?? action;
  if (action !== 'transaction.verify' || after === null || typeof after !== 'object') return base;
  const a = after as Record<string, unknown>;
  const parts = [base];
  if (typeof a['sms_record_id'] === 'number') parts.push(`with SMS #${a['sms_record_id']}`);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const claimed = str(a['claimed_gateway_trx_id']);
  const smsId = str(a['gateway_trx_id']);
  if (claimed !== null && smsId !== null) parts.push(`; claimed trx id ${claimed} corrected to ${smsId}`);
  const accepted = str(a['sms_amount_accepted']);
  if (accepted !== null) parts.push(`; SMS amount ${accepted} accepted`);
  return parts.join(' ').replace(/ ;/g, ';');
}

function auditNote(after: unknown): string | null {
  if (after === null || typeof after !== 'object') return null;
  const a = after as Record<string, unknown>;
  const v = a['note'] ?? a['reason'];
  return typeof v === 'string' ? v : null;
}

/**
 * A transaction's story for the console, oldest first, built from what the
 * database already keeps (the transaction, SMS records, webhook events and
 * deliveries, refunds, the audit log): nothing is recorded twice for it.
 * Titles carry ids, amounts and statuses only, never SMS text or customer data;
 * what operators wrote when deciding is shown as each entry's `note`.
 */
export async function getTransactionTimeline(em: Db, transactionId: number, scope?: { brandIds: readonly number[] | null }): Promise<TimelineEntry[]> {
  const t = await timelineTransaction(em, transactionId, scope?.brandIds ?? null);
  if (!t) throw new AppError('TRANSACTION_NOT_FOUND');

  const [sms, deliveries, refunds, audits] = await timelineParts(em, transactionId, t.brand_id);

  const out: TimelineEntry[] = [];
  const push = (at: Date | null, e: Omit<TimelineEntry, 'at'>) => {
    if (at) out.push({ at: at.toISOString(), ...e });
  };
  push(t.created_at, { kind: 'created', title: `Started: ${t.amount} ${t.currency} (${t.trx_id})`, status: null, actor: null, note: null, ref: null });
  for (const r of sms) {
    const role = r.transaction_id === transactionId ? 'SMS matched' : 'SMS names it as a candidate';
    const said = [r.parsed_amount, r.parsed_trx_id].filter(Boolean).join(', ');
    push(r.server_received_at, { kind: 'sms', title: `${role}${said ? `: ${said}` : ''}${r.resolution ? ` (${r.resolution})` : ''}`, status: r.match_status, actor: null, note: r.resolution_note, ref: { type: 'sms_record', id: r.id } });
  }
  if (t.status === 'completed') push(t.completed_at, { kind: 'completed', title: `Completed${t.completion_source ? ` by ${t.completion_source}` : ''}`, status: 'completed', actor: null, note: null, ref: null });
  if (t.status === 'failed') push(t.updated_at, { kind: 'failed', title: `Failed${t.failure_reason ? `: ${t.failure_reason}` : ''}`, status: 'failed', actor: null, note: null, ref: null });
  if (t.status === 'expired') push(t.updated_at, { kind: 'expired', title: 'Expired', status: 'expired', actor: null, note: null, ref: null });
  for (const d of deliveries) {
    const host = safeHost(d.url);
    push(d.created_at, { kind: 'webhook', title: `${d.event} to ${host} (${d.attempts} attempt${d.attempts === 1 ? '' : 's'})`, status: d.status, actor: null, note: null, ref: { type: 'webhook_delivery', id: d.id } });
  }
  for (const r of refunds) {
    push(r.created_at, { kind: 'refund', title: `Refund of ${r.amount} ${r.currency}`, status: r.status, actor: null, note: null, ref: { type: 'refund', id: r.id } });
  }
  for (const a of audits) {
    push(a.created_at, { kind: 'action', title: auditTitle(a.action, a.after), status: null, actor: a.actor, note: auditNote(a.after), ref: { type: 'audit_entry', id: a.id } });
  }
  return out.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
}

/** Only the host of a webhook URL: its path or query may carry a merchant's secret token. */
function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an endpoint';
  }
}
