import { randomBytes } from 'node:crypto';
import type { EntityManager } from '../../infra/database/orm.ts';
import { enqueueInTransaction } from '../../infra/jobs/workers.ts';
import type { TransactionStatus } from '../payments/entities.ts';
import { pgDate, pgDateOrNull } from '../../infra/database/pg-date.ts';
import type { TransactionRecord } from '../payments/transactions.ts';
import { SANDBOX_TOKEN_RE, sandboxSessionToken, sandboxTokenHash } from './signature.ts';

export const SEND_SANDBOX_CALLBACK_QUEUE = 'send-sandbox-callback';

type SandboxSessionStatus = 'open' | 'approved' | 'declined';

/** One payment the sandbox gateway was asked to collect, as its page shows it. */
export interface SandboxSession {
  id: number;
  transactionId: number;
  trxId: string;
  paymentId: string;
  brandName: string;
  /** False once the brand is disabled: its sandbox page and decisions are refused. */
  brandActive: boolean;
  gatewayName: string;
  amount: string;
  currency: string;
  status: SandboxSessionStatus;
  gatewayTrxId: string | null;
  declineReason: string | null;
  expiresAt: Date;
  decidedAt: Date | null;
  /** Whether the session can still be decided (open and not past its expiry, by the database clock). */
  decidable: boolean;
  transactionStatus: TransactionStatus;
  callbackAttempts: number;
  callbackLastStatus: number | null;
  callbackDeliveredAt: Date | null;
}

interface SessionRow {
  id: string;
  transaction_id: string;
  trx_id: string;
  payment_id: string;
  brand_name: string;
  brand_status: string;
  gateway_name: string;
  amount: string;
  currency: string;
  status: SandboxSessionStatus;
  gateway_trx_id: string | null;
  decline_reason: string | null;
  expires_at: string | Date;
  decided_at: string | Date | null;
  decidable: boolean;
  transaction_status: TransactionStatus;
  callback_attempts: number;
  callback_last_status: number | null;
  callback_delivered_at: string | Date | null;
}

const SELECT = `
  SELECT s.id, s.transaction_id, s.trx_id, i.uuid AS payment_id, b.name AS brand_name, b.status AS brand_status, g.name AS gateway_name,
         s.amount::text AS amount, s.currency, s.status, s.gateway_trx_id, s.decline_reason, s.expires_at, s.decided_at,
         (s.status = 'open' AND s.expires_at > now()) AS decidable, t.status AS transaction_status,
         s.callback_attempts, s.callback_last_status, s.callback_delivered_at
    FROM sandbox_sessions s
    JOIN transactions t ON t.id = s.transaction_id
    JOIN payment_intents i ON i.id = t.intent_id
    JOIN brands b ON b.id = t.brand_id
    JOIN gateways g ON g.id = t.gateway_id`;

function toSession(r: SessionRow): SandboxSession {
  return {
    id: Number(r.id),
    transactionId: Number(r.transaction_id),
    trxId: r.trx_id,
    paymentId: r.payment_id,
    brandName: r.brand_name,
    brandActive: r.brand_status === 'active',
    gatewayName: r.gateway_name,
    amount: r.amount,
    currency: r.currency,
    status: r.status,
    gatewayTrxId: r.gateway_trx_id,
    declineReason: r.decline_reason,
    expiresAt: pgDate(r.expires_at),
    decidedAt: pgDateOrNull(r.decided_at),
    decidable: r.decidable,
    transactionStatus: r.transaction_status,
    callbackAttempts: Number(r.callback_attempts),
    callbackLastStatus: r.callback_last_status === null ? null : Number(r.callback_last_status),
    callbackDeliveredAt: pgDateOrNull(r.callback_delivered_at),
  };
}

function sandboxPayPath(token: string): string {
  return `/sandbox/pay/${token}`;
}

/** The sandbox page URL of a transaction (derivable at any time from its reference). */
export function sandboxPayUrl(publicBaseUrl: string, secret: string, trxId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${sandboxPayPath(sandboxSessionToken(secret, trxId))}`;
}

/**
 * Hands a new transaction to the sandbox, inside the caller's transaction (the
 * session exists exactly when the transaction does). The session expires with
 * the payment link.
 */
export async function openSandboxSession(tx: EntityManager, secret: string, t: TransactionRecord, expiresAt: Date): Promise<void> {
  const token = sandboxSessionToken(secret, t.trxId);
  await tx.execute(
    `INSERT INTO sandbox_sessions (token_hash, transaction_id, trx_id, amount, currency, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
    [sandboxTokenHash(token), t.id, t.trxId, t.amount, t.currency, expiresAt],
  );
}

export async function findSandboxSession(em: EntityManager, token: string): Promise<SandboxSession | null> {
  if (!SANDBOX_TOKEN_RE.test(token)) return null;
  const rows = await em.execute<SessionRow[]>(`${SELECT} WHERE s.token_hash = ?`, [sandboxTokenHash(token)]);
  return rows[0] ? toSession(rows[0]) : null;
}

export async function getSandboxSession(em: EntityManager, id: number): Promise<SandboxSession | null> {
  const rows = await em.execute<SessionRow[]>(`${SELECT} WHERE s.id = ?`, [id]);
  return rows[0] ? toSession(rows[0]) : null;
}

export type SandboxDecision = { outcome: 'approved' } | { outcome: 'declined'; reason: string };

export type DecideResult =
  | { kind: 'decided'; session: SandboxSession }
  /** Already approved or declined (a double click, the back button): nothing changes. */
  | { kind: 'already_decided'; session: SandboxSession }
  | { kind: 'expired'; session: SandboxSession }
  /** The brand is disabled: nothing is decided (its checkout takes no payments). */
  | { kind: 'brand_disabled'; session: SandboxSession }
  | { kind: 'not_found' };

/**
 * The customer's choice on the sandbox page. Decided once, by a conditional
 * UPDATE (two clicks racing: one wins); the callback job is enqueued in the
 * same database transaction, so a decision is never recorded without the
 * callback that reports it.
 */
export async function decideSandboxSession(em: EntityManager, token: string, decision: SandboxDecision): Promise<DecideResult> {
  if (!SANDBOX_TOKEN_RE.test(token)) return { kind: 'not_found' };
  const hash = sandboxTokenHash(token);
  return em.transactional(async (tx) => {
    const gatewayTrxId = `SBX${randomBytes(8).toString('hex').toUpperCase()}`;
    const reason = decision.outcome === 'declined' ? decision.reason.trim().slice(0, 500) || 'Declined' : null;
    const updated = await tx.execute<Array<{ id: string }>>(
      `UPDATE sandbox_sessions SET status = ?, gateway_trx_id = ?, decline_reason = ?, decided_at = now()
        WHERE token_hash = ? AND status = 'open' AND expires_at > now()
          AND EXISTS (SELECT 1 FROM transactions t JOIN brands b ON b.id = t.brand_id
                       WHERE t.id = sandbox_sessions.transaction_id AND b.status = 'active')
        RETURNING id`,
      [decision.outcome, gatewayTrxId, reason, hash],
    );
    if (updated[0]) {
      const sessionId = Number(updated[0].id);
      await enqueueInTransaction(tx, SEND_SANDBOX_CALLBACK_QUEUE, { sessionId });
      return { kind: 'decided', session: (await getSandboxSession(tx, sessionId))! };
    }
    const rows = await tx.execute<SessionRow[]>(`${SELECT} WHERE s.token_hash = ?`, [hash]);
    if (!rows[0]) return { kind: 'not_found' };
    const session = toSession(rows[0]);
    if (!session.brandActive) return { kind: 'brand_disabled', session };
    return session.status === 'open' ? { kind: 'expired', session } : { kind: 'already_decided', session };
  });
}

/** Records one callback attempt (the sandbox's own delivery log). */
export async function recordCallbackAttempt(em: EntityManager, sessionId: number, status: number | null, delivered: boolean): Promise<void> {
  await em.execute(
    `UPDATE sandbox_sessions SET callback_attempts = callback_attempts + 1, callback_last_status = ?,
            callback_delivered_at = CASE WHEN ? THEN COALESCE(callback_delivered_at, now()) ELSE callback_delivered_at END
      WHERE id = ?`,
    [status, delivered, sessionId],
  );
}
