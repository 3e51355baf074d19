import pgListen, { type Subscriber } from 'pg-listen';
import type { Logger } from '../logger.ts';

/**
 * PostgreSQL LISTEN/NOTIFY for a process: ONE dedicated connection (opened on
 * the first subscription, so a CLI run or a worker-only process holds none)
 * listening on the channels asked for, fanning every notification out to the
 * in-memory subscribers of its payload. A NOTIFY sent inside a database
 * transaction arrives after that transaction commits, in every process of the
 * service, whichever process (HTTP request, job worker) committed it.
 *
 * pg-listen keeps the connection: it reconnects with back-off, LISTENs again,
 * and checks the connection every 30 s. Notifications sent while it was away
 * are lost, so after a reconnect every subscriber is called once as if
 * notified: subscribers re-read what they follow, which makes a missed or a
 * spurious notification harmless.
 *
 * Subscribers are bounded per key and per process (SubscriberLimitError).
 */
export interface NotificationHubLimits {
  /** Subscribers in this process, all channels and keys together. */
  total: number;
  /** Subscribers of one channel and payload (one payment's open pages). */
  perKey: number;
}

export interface SubscriberHandlers {
  /** A notification with this subscriber's payload arrived, or the connection came back (re-read). */
  onNotify(): void;
  /** The hub is shutting down: end what this subscriber holds open. */
  onClose(): void;
}

export interface NotificationSubscription {
  /** Idempotent. */
  unsubscribe(): void;
}

export class SubscriberLimitError extends Error {
  readonly scope: 'total' | 'perKey';
  constructor(scope: 'total' | 'perKey') {
    super(scope === 'total' ? 'too many notification subscribers in this process' : 'too many notification subscribers for this key');
    this.name = 'SubscriberLimitError';
    this.scope = scope;
  }
}

export interface NotificationHub {
  /**
   * Calls `handlers.onNotify` for every notification on `channel` whose payload
   * is `key`. Resolves once the LISTEN is in effect: a change committed after
   * that is never missed. Throws SubscriberLimitError over a limit.
   */
  subscribe(channel: string, key: string, handlers: SubscriberHandlers): Promise<NotificationSubscription>;
  /** Current subscribers (of one channel, or one channel and key). */
  count(channel?: string, key?: string): number;
  /** Calls every subscriber's onClose and forgets them; later subscriptions are refused (shutdown, before the HTTP server closes). */
  closeSubscribers(): void;
  /** closeSubscribers(), then the connection. */
  close(): Promise<void>;
}

// A CommonJS module: its function is the `default` member of what Node's ESM import gives.
const createPostgresSubscriber = pgListen.default;

interface Entry {
  handlers: SubscriberHandlers;
}

export function createNotificationHub(opts: { url: string; logger: Logger; limits: NotificationHubLimits }): NotificationHub {
  const { logger, limits } = opts;
  // channel -> payload -> subscribers
  const channels = new Map<string, Map<string, Set<Entry>>>();
  let total = 0;
  let subscriber: Subscriber | null = null;
  let connecting: Promise<Subscriber> | null = null;
  const listening = new Map<string, Promise<unknown>>();
  let closed = false;

  const notify = (entries: Iterable<Entry>) => {
    for (const e of [...entries]) {
      try {
        e.handlers.onNotify();
      } catch (err) {
        logger.error({ err: { message: (err as Error).message } }, 'notification subscriber failed');
      }
    }
  };

  function connection(): Promise<Subscriber> {
    if (subscriber) return Promise.resolve(subscriber);
    connecting ??= (async () => {
      const s = createPostgresSubscriber(
        { connectionString: opts.url, application_name: 'paycollect-listen' },
        {
          // Payloads are plain keys, not JSON.
          parse: (raw: string) => raw,
          // Never give up: the service outlives a database restart.
          retryTimeout: 0,
          retryLimit: Infinity,
          retryInterval: (attempt) => Math.min(250 * 2 ** attempt, 10_000),
        },
      );
      let first = true;
      s.events.on('connected', () => {
        if (first) {
          first = false;
          return;
        }
        logger.warn('notification connection restored; subscribers re-read');
        for (const keys of channels.values()) for (const set of keys.values()) notify(set);
      });
      s.events.on('reconnect', (attempt) => {
        if (attempt === 1) logger.warn('notification connection lost; reconnecting');
      });
      s.events.on('error', (err) => logger.error({ err: { message: err.message } }, 'notification connection failed'));
      s.events.on('notification', (n) => {
        const set = channels.get(n.channel)?.get(String(n.payload ?? ''));
        if (set) notify(set);
      });
      try {
        await s.connect();
      } catch (err) {
        connecting = null;
        await s.close().catch(() => undefined);
        throw err;
      }
      subscriber = s;
      return s;
    })();
    return connecting;
  }

  function listenOn(channel: string): Promise<unknown> {
    let p = listening.get(channel);
    if (!p) {
      p = connection().then((s) => s.listenTo(channel));
      // A failed LISTEN is retried by the next subscriber.
      p.catch(() => listening.delete(channel));
      listening.set(channel, p);
    }
    return p;
  }

  function remove(channel: string, key: string, entry: Entry): boolean {
    const keys = channels.get(channel);
    const set = keys?.get(key);
    if (!set?.delete(entry)) return false;
    total--;
    if (set.size === 0) keys!.delete(key);
    return true;
  }

  return {
    async subscribe(channel, key, handlers) {
      if (closed) throw new Error('notification hub is closed');
      if (total >= limits.total) throw new SubscriberLimitError('total');
      let keys = channels.get(channel);
      if (!keys) channels.set(channel, (keys = new Map()));
      let set = keys.get(key);
      if ((set?.size ?? 0) >= limits.perKey) throw new SubscriberLimitError('perKey');
      if (!set) keys.set(key, (set = new Set()));
      const entry: Entry = { handlers };
      // Counted before the LISTEN completes, so concurrent subscribers cannot pass the limits together.
      set.add(entry);
      total++;
      try {
        await listenOn(channel);
      } catch (err) {
        remove(channel, key, entry);
        throw err;
      }
      return { unsubscribe: () => void remove(channel, key, entry) };
    },
    count(channel, key) {
      if (channel === undefined) return total;
      const keys = channels.get(channel);
      if (!keys) return 0;
      if (key !== undefined) return keys.get(key)?.size ?? 0;
      let n = 0;
      for (const set of keys.values()) n += set.size;
      return n;
    },
    closeSubscribers() {
      closed = true;
      const all = [...channels.values()].flatMap((keys) => [...keys.values()].flatMap((set) => [...set]));
      channels.clear();
      total = 0;
      for (const e of all) {
        try {
          e.handlers.onClose();
        } catch {
          /* closing anyway */
        }
      }
    },
    async close() {
      this.closeSubscribers();
      const s = subscriber ?? (connecting ? await connecting.catch(() => null) : null);
      subscriber = null;
      connecting = null;
      await s?.close().catch(() => undefined);
    },
  };
}
