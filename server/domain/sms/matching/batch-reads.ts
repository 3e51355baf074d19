import type { PiiCipher } from '../../../infra/crypto/pii-cipher.ts';
import type { Db } from '../../db.ts';
import { breaksChain, chainState, firstLinkState, linkTrusted, repairs, sameWalletOtherSim, type ChainReading, type ChainVerdict } from './balance-chain.ts';
import { candidateRowOf, lockOpenCandidates, type CandidateQuery, type CandidateRow, type LockedCandidate } from './candidates.ts';
import { customerPhonesOfCandidates } from './expected-payer.ts';
import type { ContradictedQuery } from './contradicted.ts';
import { lockGatewayTrxIds } from './gateway-trx-lock.ts';
import { candidatesOf, contradictedTrxIds } from './queries/candidates.ts';
import { chainLinksAround, createAndLockChains, moveChainHead, repairChain } from './queries/chains.ts';
import { OPEN_STATUSES, type ChainState } from './matcher.ts';
import type { SmsOutcome } from './queries/records.ts';

/**
 * What deciding an SMS reads from the database (service.ts, decide()): every
 * read is made once for the whole batch, set-based, before the first record is
 * decided (batchReads), and answered from memory.
 */
export interface DecideIo {
  /** `wallet` is the chain key (balance-chain.ts chainWalletKey); `sim` the SMS's slot, and whether a wallet account names it. */
  chain(q: { deviceId: number; wallet: string; recordId: number; smsTime: Date; reading: ChainReading; sim: { slot: number | null; pinned: boolean } }): Promise<ChainVerdict>;
  /** The ids among `trxIds` that an earlier SMS contradicted or a person refused (contradicted.ts). */
  contradicted(q: ContradictedQuery): Promise<Set<string>>;
  /** The candidates of reading `index` of record `recordId` (loadCandidates). */
  candidates(recordId: number, index: number, q: CandidateQuery): Promise<CandidateRow[]>;
  lockOpen(rows: readonly CandidateRow[]): Promise<Map<number, LockedCandidate>>;
  /** The customer's phone, in clear, of each row's payment (by intent id), for rows as loaded or as locked. */
  customerPhones(rows: ReadonlyArray<CandidateRow | LockedCandidate>): Promise<Map<number, string>>;
}

/** What a batch needs of one record, worked out from its text before any lock (service.ts). */
export interface BatchRecordPlan {
  recordId: number;
  deviceId: number;
  smsTime: Date;
  /**
   * Set when the record's text was read: every reading reaches the chain (a credit without a balance may be
   * missing one, a debit without one is a link derived from the previous, balance-chain.ts).
   */
  chain: { wallet: string; reading: ChainReading } | null;
  /** The candidate queries of its money-in readings, in reading order, and the trx ids to lock. */
  queries: CandidateQuery[];
}

/** One stored link of a chain: what the next decisions compare with. */
interface Link {
  id: number;
  /** Microseconds since the epoch (exact for PostgreSQL's timestamptz). */
  at: bigint;
  /** Microseconds since the epoch of its request's arrival (sms_records.server_received_at). */
  arrived: bigint;
  /** The SMS's place in its request as the phone received them (sms_records.phone_order). */
  order: number;
  balance: string;
  state: ChainState;
  resolution: string | null;
  amount: string;
  fee: string | null;
  direction: 'in' | 'out';
}

const micros = (d: Date) => BigInt(d.getTime()) * 1000n;
type ChainPlace = { at: bigint; arrived: bigint; order: number; id: number };
/** Chain order (sms_records_chain_idx): SMS time, its request's arrival, the phone's order, record id. */
const before = (a: ChainPlace, b: ChainPlace) => {
  for (const [x, y] of [[a.at, b.at], [a.arrived, b.arrived], [BigInt(a.order), BigInt(b.order)], [BigInt(a.id), BigInt(b.id)]] as const) if (x !== y) return x < y;
  return false;
};

/**
 * Thrown when an SMS of the batch fills a break of its chain (balance-chain.ts
 * `repairs`): the repair rewrites stored links that later records of the batch
 * may have read, so the batch is decided again one record at a time (service.ts).
 */
export class ChainRepairInBatch extends Error {
  constructor() {
    super('an SMS of the batch repairs its balance chain: decided one by one');
  }
}

/**
 * The decisions' reads for a whole batch, in the global lock order of SMS
 * matching (gateway-trx-lock.ts): the balance chains of the batch (sorted),
 * every gateway trx id of every money-in reading (sorted), then the open
 * candidates' intents and transactions (each in id order, lockOpenCandidates).
 * Each class of lock is taken in one statement, so a batch of ten makes the
 * same statements as a batch of one; a single SMS is a batch of one.
 *
 * The answers then replay what deciding the records one after the other in
 * their own transactions would have read: a record decided earlier in the
 * batch is a link of the chain for the later ones, and a transaction it
 * completed is seen completed by them (`completed`). Nothing else can change
 * what they read meanwhile: the batch holds the chains, the trx ids and the
 * open candidates locked until it commits.
 */
export async function batchReads(tx: Db, cipher: PiiCipher, plans: readonly BatchRecordPlan[]) {
  // 1. The chains: created if new, locked in (device, wallet) order, and the stored links either side of each record.
  const chained = plans.filter((p) => p.chain !== null);
  const chainKey = (deviceId: number, wallet: string) => `${deviceId}\u0000${wallet}`;
  const pairs = [...new Map(chained.map((p) => [chainKey(p.deviceId, p.chain!.wallet), { device_id: p.deviceId, wallet_key: p.chain!.wallet }])).values()].sort(
    (a, b) => a.device_id - b.device_id || (a.wallet_key < b.wallet_key ? -1 : a.wallet_key > b.wallet_key ? 1 : 0),
  );
  const heads = new Map<string, { id: number | null; at: number | null; balance: string | null; broken: boolean; changed: boolean; hasLinks: boolean }>();
  const stored = new Map<number, { arrived: bigint; order: number; prev: Link | null; next: Link | null }>();
  if (pairs.length > 0) {
    for (const h of await createAndLockChains(tx, pairs)) {
      heads.set(chainKey(h.device_id, h.wallet_key), { id: null, at: h.last_sms_time?.getTime() ?? null, balance: null, broken: false, changed: false, hasLinks: h.last_record_id !== null });
    }
    const input = chained.map((p) => ({ id: p.recordId, device_id: p.deviceId, wallet: p.chain!.wallet, sms_time: p.smsTime.toISOString() }));
    for (const r of await chainLinksAround(tx, input)) {
      stored.set(Number(r.id), {
        arrived: BigInt(r.own_arrived),
        order: r.own_order,
        prev:
          r.p_id === null
            ? null
            : { id: Number(r.p_id), at: BigInt(r.p_at!), arrived: BigInt(r.p_arrived!), order: r.p_order!, balance: r.p_balance!, state: r.p_state, resolution: r.p_resolution, amount: '0', fee: null, direction: 'in' },
        next:
          r.n_id === null
            ? null
            : { id: Number(r.n_id), at: BigInt(r.n_at!), arrived: BigInt(r.n_arrived!), order: r.n_order!, balance: r.n_balance!, state: r.n_state, resolution: r.n_resolution, amount: r.n_amount!, fee: r.n_fee, direction: r.n_direction! },
      });
    }
  }

  // 2. Every trx id of the batch, sorted, in one statement (gateway-trx-lock.ts).
  await lockGatewayTrxIds(tx, plans.flatMap((p) => p.queries.map((q) => q.trxId)));
  // Under those locks, the ids an SMS stored before contradicted or a person refused, per brand and mode (normally one).
  const scopes = [...new Map(plans.flatMap((p) => p.queries.map((q) => [`${q.brandId}:${q.mode}`, { brandId: q.brandId, mode: q.mode }] as const))).values()];
  // Trx ids contradicted before the batch (per brand and mode), and by its records decided so far.
  const contradicted = new Map<string, Set<string>>();
  for (const scope of scopes) {
    const trxIds = [...new Set(plans.flatMap((p) => p.queries.filter((q) => q.brandId === scope.brandId && q.mode === scope.mode).map((q) => q.trxId)))];
    contradicted.set(`${scope.brandId}:${scope.mode}`, new Set(await contradictedTrxIds(tx, { ...scope, recordIds: plans.map((p) => p.recordId), trxIds })));
  }

  // 3. The candidates of every reading in one statement (the conditions of loadCandidates per reading).
  const queries = plans.flatMap((p) => p.queries.map((q, index) => ({ key: `${p.recordId}:${index}`, q })));
  const loaded = new Map<string, Array<CandidateRow & { claims: boolean }>>(queries.map(({ key }) => [key, []]));
  for (const r of await candidatesOf(tx, queries.map(({ q }) => q))) {
    loaded.get(queries[r.n]!.key)!.push({ ...candidateRowOf(r), claims: r.claims });
  }

  // 4. The open ones locked (intents, then transactions): the decisions use the rows as they are under their locks.
  const all = [...loaded.values()].flat();
  const locked = await lockOpenCandidates(tx, all);
  // Every candidate without a declared number (decide() asks for the claimers among them), for the whole batch at once.
  const phones = await customerPhonesOfCandidates(tx, cipher, all.map((c) => locked.get(c.id) ?? c).filter((c) => !c.payerNumberEncrypted));

  // Links decided in this batch, per chain, as they were stored.
  const decidedLinks = new Map<string, Link[]>();
  const planOf = new Map(plans.map((p) => [p.recordId, p]));

  const io: DecideIo = {
    async chain(q) {
      const key = chainKey(q.deviceId, q.wallet);
      const fromDb = stored.get(q.recordId);
      const me = { id: q.recordId, at: micros(q.smsTime), arrived: fromDb?.arrived ?? 0n, order: fromDb?.order ?? 0 };
      const links = [...(decidedLinks.get(key) ?? [])];
      if (fromDb?.prev) links.push(fromDb.prev);
      if (fromDb?.next) links.push(fromDb.next);
      let prev: Link | null = null;
      let next: Link | null = null;
      for (const l of links) {
        if (l.id === q.recordId) continue;
        if (before(l, me)) {
          if (prev === null || before(prev, l)) prev = l;
        } else if (next === null || before(l, next)) next = l;
      }
      const verdict = chainState(
        q.reading,
        prev ? { balance: prev.balance, trusted: linkTrusted(prev.state, prev.resolution) } : null,
        next ? { balance: next.balance, amount: next.amount, fee: next.fee, direction: next.direction } : null,
      );
      if (verdict.state === 'first') {
        // The phone's other chains of this wallet, as stored or as this batch left them.
        const otherSimHasChain = [...heads].some(([k, h]) => {
          const [device, wallet] = k.split('\u0000') as [string, string];
          return Number(device) === q.deviceId && sameWalletOtherSim(wallet, q.wallet) && (h.hasLinks || h.changed);
        });
        verdict.state = firstLinkState({ simSlot: q.sim.slot, pinned: q.sim.pinned, otherSimHasChain });
      }
      // A stored link after it that this SMS repairs (only a stored one: the batch decides in chain order). The
      // repair rewrites stored links that later records of a larger batch may have read: those batches are decided
      // again as batches of one (service.ts), which repair here.
      if (verdict.balance !== null && next !== null && next.id === fromDb?.next?.id && repairs(verdict.state, next)) {
        if (plans.length > 1) throw new ChainRepairInBatch();
        await repairChain(tx, { deviceId: q.deviceId, wallet: q.wallet, from: next.id });
      }
      const head = heads.get(key)!;
      if ((head.at === null || head.at <= q.smsTime.getTime()) && verdict.balance !== null) {
        Object.assign(head, { id: q.recordId, at: q.smsTime.getTime(), balance: verdict.balance, broken: breaksChain(verdict.state), changed: true });
      }
      return { state: verdict.state, previousId: prev ? prev.id : null, expected: verdict.expected, balance: verdict.balance };
    },
    async contradicted(q) {
      const known = contradicted.get(`${q.brandId}:${q.mode}`) ?? new Set<string>();
      return new Set(q.trxIds.filter((id) => known.has(id)));
    },
    async candidates(recordId, index) {
      // As a later read would see them: a transaction completed earlier in this batch is no longer open, and is
      // loaded again only as a claimer of the id.
      return (loaded.get(`${recordId}:${index}`) ?? [])
        .filter((c) => c.claims || OPEN_STATUSES.includes((locked.get(c.id) ?? c).status))
        .map(({ claims: _claims, ...c }) => c);
    },
    async lockOpen(rows) {
      const out = new Map<number, LockedCandidate>();
      for (const r of rows) {
        const l = locked.get(r.id);
        if (l) out.set(r.id, l);
      }
      return out;
    },
    async customerPhones(rows) {
      return new Map(rows.flatMap(({ intentId: id }) => (phones.has(id) ? [[id, phones.get(id)!] as const] : [])));
    },
  };

  return {
    io,
    /** A record's outcome, as stored: a link of its chain for the records decided after it. */
    decided(recordId: number, o: SmsOutcome) {
      const plan = planOf.get(recordId);
      const scope = plan?.queries[0];
      if (o.status === 'balance_mismatch' && o.parsed?.trxId && scope) {
        const key = `${scope.brandId}:${scope.mode}`;
        contradicted.set(key, (contradicted.get(key) ?? new Set<string>()).add(o.parsed.trxId));
      }
      if (!o.chain || !o.parsed || o.chain.balance === null || !plan) return;
      const key = chainKey(plan.deviceId, o.chain.wallet);
      const list = decidedLinks.get(key) ?? [];
      const place = stored.get(recordId);
      list.push({ id: recordId, at: micros(o.chain.smsTime), arrived: place?.arrived ?? 0n, order: place?.order ?? 0, balance: o.chain.balance, state: o.chain.state, resolution: null, amount: o.parsed.amount, fee: o.parsed.fee, direction: o.parsed.direction });
      decidedLinks.set(key, list);
    },
    /** A transaction this batch completed: later records see it completed. */
    completed(t: LockedCandidate['record']) {
      const l = locked.get(t.id);
      if (l) locked.set(t.id, { ...l, status: t.status, gatewayTrxId: t.gatewayTrxId, record: t });
    },
    /** Moves each chain's head where the batch's newest link with a balance left it. */
    async writeHeads(): Promise<void> {
      for (const [key, h] of heads) {
        if (!h.changed) continue;
        const [deviceId, wallet] = key.split('\u0000') as [string, string];
        await moveChainHead(tx, { id: h.id, balance: h.balance, at: new Date(h.at!), broken: h.broken, deviceId: Number(deviceId), wallet });
      }
    },
  };
}
