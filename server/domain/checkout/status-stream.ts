import { AppError } from '../../../contract/common/errors.ts';
import type { CheckoutPayment, CheckoutStatusEvent } from '../../../contract/checkout/payments.ts';
import { SubscriberLimitError, type NotificationHub, type NotificationSubscription } from '../../infra/database/notifications.ts';
import type { Logger } from '../../infra/logger.ts';
import { PAYMENT_STATUS_CHANNEL } from '../payments/status-notify.ts';
import { loadCheckout, type CheckoutLinks } from './view.ts';
import type { CheckoutStatus } from './state.ts';
import type { Db } from '../db.ts';

/** Nothing changes after these: the stream says so and ends. */
const TERMINAL: readonly CheckoutStatus[] = ['completed', 'expired', 'canceled'];
/** Statuses that turn into `expired` by time alone (checkoutState), with no statement to notify it. */
const OPEN: readonly CheckoutStatus[] = ['pending', 'failed', 'processing', 'awaiting_verification'];
/** Longest wait setTimeout takes. */
const MAX_TIMER_MS = 0x7fffffff;

export interface StatusSink {
  status(event: CheckoutStatusEvent): void;
  /** The stream is over: terminal status, the payment became invisible, or shutdown. Called once. */
  end(): void;
}

export interface StatusFollower {
  /** Stops following (the client went away); idempotent, does not call sink.end(). */
  stop(): void;
}

/**
 * Follows one payment's checkout status for a status stream. Authorisation is
 * exactly the checkout's: every read is loadCheckout (payment id as the only
 * credential, PAYMENT_NOT_FOUND for unknown or malformed ids, BRAND_DISABLED),
 * so the first read's AppError is the caller's answer and a stream never shows
 * more than `GET /payments/{id}` would.
 *
 * Order matters: the first read authorises and names the intent, then the
 * subscription is in effect (LISTEN done), then a second read; a change
 * committed between the two reads is seen by the second or notified after
 * it, never lost. Each notification triggers one more read (one at a time;
 * notifications arriving meanwhile fold into one further read), and only a
 * status (or check with the merchant's phone) different from the last one
 * sent is passed on. The phone check also ends by time: a timer reads again
 * at its `phone_check_until`.
 */
export async function followCheckoutStatus(
  ctx: { db: Db; hub: NotificationHub; links: CheckoutLinks; logger: Logger },
  paymentId: string,
  sink: StatusSink,
): Promise<StatusFollower> {
  const first = await loadCheckout(ctx.db, paymentId, ctx.links);
  let last: string | null = null;
  let stopped = false;
  let reading: Promise<void> | null = null;
  let again = false;
  let expiryTimer: NodeJS.Timeout | null = null;
  let checkTimer: NodeJS.Timeout | null = null;
  let subscription: NotificationSubscription | null = null;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    subscription?.unsubscribe();
    if (expiryTimer) clearTimeout(expiryTimer);
    if (checkTimer) clearTimeout(checkTimer);
  };
  const finish = () => {
    if (stopped) return;
    stop();
    sink.end();
  };

  const show = (view: CheckoutPayment) => {
    const { status, expires_at: expiresAt } = view;
    if (stopped) return;
    const checkUntil = view.transaction?.phone_check_until ?? null;
    const checking = checkUntil !== null;
    const key = `${status}:${checking}`;
    if (key !== last) {
      last = key;
      const terminal = TERMINAL.includes(status);
      sink.status({ status, terminal, checking_phone: checking });
      if (terminal) return finish();
    }
    // The check with the merchant's phone ends by time when the phone does not answer: look again then.
    if (checkTimer) clearTimeout(checkTimer);
    checkTimer = null;
    if (checkUntil !== null) {
      checkTimer = setTimeout(() => {
        checkTimer = null;
        refresh();
      }, Math.min(Math.max(Date.parse(checkUntil) - Date.now() + 250, 250), MAX_TIMER_MS));
      checkTimer.unref();
    }
    // Expiry by time: nothing in the database changes at that moment, so look again then.
    if (!expiryTimer && OPEN.includes(status)) {
      const wait = Date.parse(expiresAt) - Date.now() + 250;
      expiryTimer = setTimeout(() => {
        expiryTimer = null;
        refresh();
      }, Math.min(Math.max(wait, 250), MAX_TIMER_MS));
      expiryTimer.unref();
    }
  };

  const read = async () => {
    try {
      const { view } = await loadCheckout(ctx.db, paymentId, ctx.links);
      show(view);
    } catch (err) {
      // The payment's brand was disabled meanwhile (or the payment is gone): nothing more to show here.
      if (err instanceof AppError) return finish();
      ctx.logger.error({ err: { message: (err as Error).message } }, 'checkout status read failed');
      // The client reconnects and gets a fresh read; better than a stream silently stuck.
      finish();
    }
  };

  function refresh(): void {
    if (stopped) return;
    if (reading) {
      again = true;
      return;
    }
    reading = read().finally(() => {
      reading = null;
      if (again && !stopped) {
        again = false;
        refresh();
      }
    });
  }

  show(first.view);
  if (stopped) return { stop };
  try {
    subscription = await ctx.hub.subscribe(PAYMENT_STATUS_CHANNEL, String(first.intentId), { onNotify: refresh, onClose: finish });
  } catch (err) {
    stop();
    if (err instanceof SubscriberLimitError) {
      throw new AppError('RATE_LIMITED', err.scope === 'perKey' ? 'Too many status streams for this payment' : 'Too many status streams; poll the payment instead');
    }
    throw err;
  }
  // stop() may have run while subscribing (the client left): undo the subscription.
  if (stopped) subscription.unsubscribe();
  else refresh();
  return { stop };
}

export interface StreamSlots {
  /** A place for one more stream of this client, or null when it holds `max` already; the function gives it back (once). */
  take(client: string): (() => void) | null;
  /** Open streams of one client (all clients without one). */
  count(client?: string): number;
}

/**
 * Open status streams per client in this process. The per-process bound
 * (CHECKOUT_STREAMS_MAX) alone let one client hold every place, and so turn
 * every other customer's page to polling; per client, one connection can hold
 * only a few customers' worth of tabs.
 */
export function streamSlots(max: number): StreamSlots {
  const open = new Map<string, number>();
  let total = 0;
  return {
    take(client) {
      const n = open.get(client) ?? 0;
      if (n >= max) return null;
      open.set(client, n + 1);
      total++;
      let given = false;
      return () => {
        if (given) return;
        given = true;
        total--;
        const left = (open.get(client) ?? 1) - 1;
        if (left > 0) open.set(client, left);
        else open.delete(client);
      };
    },
    count: (client) => (client === undefined ? total : (open.get(client) ?? 0)),
  };
}
