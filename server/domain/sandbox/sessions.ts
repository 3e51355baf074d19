import { randomBytes } from 'node:crypto';
import { enqueueInTransaction } from '../../infra/jobs/workers.ts';
import type { TransactionStatus } from '../payments/entities.ts';
import { transaction, type Db } from '../db.ts';
import type { TransactionRecord } from '../payments/transactions.ts';
import type { SandboxSessionStatus } from './entities.ts';
import { decideOpenSession, insertSession, selectSessionById, selectSessionByTokenHash, type SessionRow } from './queries.ts';
import { SANDBOX_TOKEN_RE, sandboxSessionToken, sandboxTokenHash } from './signature.ts';

export const SEND_SANDBOX_CALLBACK_QUEUE = 'send-sandbox-callback';


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

function toSession(r: SessionRow): SandboxSession {
  return {
    id: r.id,
    transactionId: r.transaction_id,
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
    expiresAt: r.expires_at,
    decidedAt: r.decided_at,
    decidable: r.decidable,
    transactionStatus: r.transaction_status,
    callbackAttempts: r.callback_attempts,
    callbackLastStatus: r.callback_last_status,
    callbackDeliveredAt: r.callback_delivered_at,
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
export async function openSandboxSession(tx: Db, secret: string, t: TransactionRecord, expiresAt: Date): Promise<void> {
  const token = sandboxSessionToken(secret, t.trxId);
  await insertSession(tx, { tokenHash: sandboxTokenHash(token), transactionId: t.id, trxId: t.trxId, amount: t.amount, currency: t.currency, expiresAt });
}

export async function findSandboxSession(em: Db, token: string): Promise<SandboxSession | null> {
  if (!SANDBOX_TOKEN_RE.test(token)) return null;
  const row = await selectSessionByTokenHash(em, sandboxTokenHash(token));
  return row ? toSession(row) : null;
}

export async function getSandboxSession(em: Db, id: number): Promise<SandboxSession | null> {
  const row = await selectSessionById(em, id);
  return row ? toSession(row) : null;
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
export async function decideSandboxSession(em: Db, token: string, decision: SandboxDecision): Promise<DecideResult> {
  if (!SANDBOX_TOKEN_RE.test(token)) return { kind: 'not_found' };
  const hash = sandboxTokenHash(token);
  return transaction(em, async (tx) => {
    const gatewayTrxId = `SBX${randomBytes(8).toString('hex').toUpperCase()}`;
    const reason = decision.outcome === 'declined' ? decision.reason.trim().slice(0, 500) || 'Declined' : null;
    const updated = await decideOpenSession(tx, hash, { status: decision.outcome, gatewayTrxId, declineReason: reason });
    if (updated !== undefined) {
      await enqueueInTransaction(tx, SEND_SANDBOX_CALLBACK_QUEUE, { sessionId: updated });
      return { kind: 'decided', session: (await getSandboxSession(tx, updated))! };
    }
    const row = await selectSessionByTokenHash(tx, hash);
    if (!row) return { kind: 'not_found' };
    const session = toSession(row);
    if (!session.brandActive) return { kind: 'brand_disabled', session };
    return session.status === 'open' ? { kind: 'expired', session } : { kind: 'already_decided', session };
  });
}
