import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { enqueueInTransaction } from '../../infra/jobs/workers.ts';
import type { TransactionStatus } from '../payments/entities.ts';
import { transaction, type Db } from '../db.ts';
import type { TransactionRecord } from '../payments/transactions.ts';
import type { SandboxSessionStatus } from './entities.ts';
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

/** The session (`s`) with what its page shows of the payment; add a where on `s`. */
function sessionQuery(em: Db) {
  return em
    .selectFrom('sandbox_sessions as s')
    .innerJoin('transactions as t', 't.id', 's.transaction_id')
    .innerJoin('payment_intents as i', 'i.id', 't.intent_id')
    .innerJoin('brands as b', 'b.id', 't.brand_id')
    .innerJoin('gateways as g', 'g.id', 't.gateway_id')
    .select([
      's.id', 's.transaction_id', 's.trx_id', 'i.uuid as payment_id', 'b.name as brand_name', 'b.status as brand_status', 'g.name as gateway_name',
      's.amount', 's.currency', 's.status', 's.gateway_trx_id', 's.decline_reason', 's.expires_at', 's.decided_at', 't.status as transaction_status',
      's.callback_attempts', 's.callback_last_status', 's.callback_delivered_at',
    ])
    // By the database clock, like the conditional UPDATE that decides.
    .select(sql<boolean>`(s.status = 'open' AND s.expires_at > now())`.as('decidable'));
}

type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionQuery>['executeTakeFirstOrThrow']>>;

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
  await tx
    .insertInto('sandbox_sessions')
    .values({ token_hash: sandboxTokenHash(token), transaction_id: t.id, trx_id: t.trxId, amount: t.amount, currency: t.currency, expires_at: expiresAt })
    .execute();
}

export async function findSandboxSession(em: Db, token: string): Promise<SandboxSession | null> {
  if (!SANDBOX_TOKEN_RE.test(token)) return null;
  const row = await sessionQuery(em).where('s.token_hash', '=', sandboxTokenHash(token)).executeTakeFirst();
  return row ? toSession(row) : null;
}

export async function getSandboxSession(em: Db, id: number): Promise<SandboxSession | null> {
  const row = await sessionQuery(em).where('s.id', '=', id).executeTakeFirst();
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
    const updated = await tx
      .updateTable('sandbox_sessions')
      .set({ status: decision.outcome, gateway_trx_id: gatewayTrxId, decline_reason: reason, decided_at: sql<Date>`now()` })
      .where('token_hash', '=', hash)
      .where('status', '=', 'open')
      .where('expires_at', '>', sql<Date>`now()`)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('transactions as t')
            .innerJoin('brands as b', 'b.id', 't.brand_id')
            .select(sql`1`.as('one'))
            .whereRef('t.id', '=', 'sandbox_sessions.transaction_id')
            .where('b.status', '=', 'active'),
        ),
      )
      .returning('id')
      .executeTakeFirst();
    if (updated) {
      await enqueueInTransaction(tx, SEND_SANDBOX_CALLBACK_QUEUE, { sessionId: updated.id });
      return { kind: 'decided', session: (await getSandboxSession(tx, updated.id))! };
    }
    const row = await sessionQuery(tx).where('s.token_hash', '=', hash).executeTakeFirst();
    if (!row) return { kind: 'not_found' };
    const session = toSession(row);
    if (!session.brandActive) return { kind: 'brand_disabled', session };
    return session.status === 'open' ? { kind: 'expired', session } : { kind: 'already_decided', session };
  });
}

/** Records one callback attempt (the sandbox's own delivery log). */
export async function recordCallbackAttempt(em: Db, sessionId: number, status: number | null, delivered: boolean): Promise<void> {
  await em
    .updateTable('sandbox_sessions')
    .set((eb) => ({
      callback_attempts: eb('callback_attempts', '+', 1),
      callback_last_status: status,
      // The first delivery's time stays.
      ...(delivered ? { callback_delivered_at: sql<Date>`COALESCE(callback_delivered_at, now())` } : {}),
    }))
    .where('id', '=', sessionId)
    .execute();
}
