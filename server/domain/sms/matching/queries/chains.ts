import { sql } from 'kysely';
import { prepared, rawStatement, type Db } from '../../../db.ts';
import type { ChainState } from '../matcher.ts';

/** The balance chains (sms_balance_chains, one head per device and wallet) and their links (sms_records with a chain balance). */

type ChainPair = { device_id: number; wallet_key: string };

/**
 * The chain statements for `n` (device, wallet) pairs, compiled
 * once per count (db.ts `prepared`; a list of pairs has one shape per count): the
 * chains created if new, then locked in (device, wallet) order. Parameters are
 * named `<pair>:device_id` and `<pair>:wallet_key`.
 */
const chainStatementsByCount = new Map<number, ReturnType<typeof chainStatementsOf>>();
const chainStatementsOf = (n: number) => {
  const pairsOf = ($: Record<string, unknown>) => Array.from({ length: n }, (_, i) => ({ device_id: $[`${i}:device_id`] as number, wallet_key: $[`${i}:wallet_key`] as string }));
  return {
    create: prepared((k, $: Record<string, unknown>) => k.insertInto('sms_balance_chains').values(pairsOf($)).onConflict((oc) => oc.doNothing())),
    // Every chain of the pairs' phones, not only the pairs': whether the phone has the wallet's chain on another SIM
    // decides how a new SIM's chain starts (balance-chain.ts firstLinkState), so it is read under the same locks.
    lock: prepared((k, $: Record<string, unknown>) =>
      k
        .selectFrom('sms_balance_chains')
        .select(['device_id', 'wallet_key', 'last_sms_time', 'last_record_id'])
        .where((eb) => eb.or(pairsOf($).map((p) => eb('device_id', '=', p.device_id))))
        .orderBy('device_id')
        .orderBy('wallet_key')
        .forUpdate(),
    ),
  };
};
function chainStatements(n: number) {
  let statements = chainStatementsByCount.get(n);
  if (!statements) chainStatementsByCount.set(n, (statements = chainStatementsOf(n)));
  return statements;
}
function pairValues(pairs: readonly ChainPair[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  pairs.forEach((p, i) => {
    values[`${i}:device_id`] = p.device_id;
    values[`${i}:wallet_key`] = p.wallet_key;
  });
  return values;
}

/** headWrites' UPDATE of one chain's head, compiled once (db.ts `prepared`). */
const moveHead = prepared((k, $: { id: number | null; balance: string | null; at: Date; broken: boolean; deviceId: number; wallet: string }) =>
  k
    .updateTable('sms_balance_chains')
    .set({ last_record_id: $.id, last_balance: $.balance, last_sms_time: $.at, broken: $.broken, updated_at: sql<Date>`now()` })
    .where('device_id', '=', $.deviceId)
    .where('wallet_key', '=', $.wallet),
);

/** Creates the chains that do not exist yet, then locks every chain of their phones in (device, wallet) order; pairs sorted by the caller. */
export async function createAndLockChains(tx: Db, pairs: readonly ChainPair[]) {
  const values = pairValues(pairs);
  await chainStatements(pairs.length).create.execute(tx, values);
  return chainStatements(pairs.length).lock.execute(tx, values);
}

export type LinkRow = {
  id: string; own_arrived: string; own_order: number;
  p_id: string | null; p_at: string | null; p_arrived: string | null; p_order: number | null; p_balance: string | null; p_state: ChainState; p_resolution: string | null;
  n_id: string | null; n_at: string | null; n_arrived: string | null; n_order: number | null; n_balance: string | null; n_amount: string | null; n_fee: string | null; n_direction: 'in' | 'out' | null;
  n_state: ChainState; n_resolution: string | null;
};
/**
 * The stored links either side of each record of the batch. Raw SQL: the
 * typed builder cannot declare json_to_recordset's column definition list that
 * types the batch.
 */
const chainLinks = rawStatement<LinkRow>(
  `SELECT q.id, (extract(epoch FROM me.server_received_at) * 1000000)::bigint::text AS own_arrived, me.phone_order AS own_order,
              p.id AS p_id, p.at AS p_at, p.arrived AS p_arrived, p.phone_order AS p_order, p.chain_balance AS p_balance, p.chain_state AS p_state, p.resolution AS p_resolution,
              n.id AS n_id, n.at AS n_at, n.arrived AS n_arrived, n.phone_order AS n_order, n.chain_balance AS n_balance, n.parsed_amount AS n_amount, n.parsed_fee AS n_fee,
              n.direction AS n_direction, n.chain_state AS n_state, n.resolution AS n_resolution
         FROM json_to_recordset($1::json) AS q(id bigint, device_id bigint, wallet text, sms_time timestamptz)
         JOIN sms_records me ON me.id = q.id
         LEFT JOIN LATERAL (
           SELECT r.id, (extract(epoch FROM r.sms_time) * 1000000)::bigint::text AS at, (extract(epoch FROM r.server_received_at) * 1000000)::bigint::text AS arrived,
                  r.phone_order, r.chain_balance::text AS chain_balance, r.chain_state, r.resolution
             FROM sms_records r
            WHERE r.device_id = q.device_id AND r.wallet_key = q.wallet AND r.chain_balance IS NOT NULL AND r.id <> q.id
              AND (r.sms_time, r.server_received_at, r.phone_order, r.id) < (q.sms_time, me.server_received_at, me.phone_order, q.id)
            ORDER BY r.sms_time DESC, r.server_received_at DESC, r.phone_order DESC, r.id DESC LIMIT 1) p ON true
         LEFT JOIN LATERAL (
           SELECT r.id, (extract(epoch FROM r.sms_time) * 1000000)::bigint::text AS at, (extract(epoch FROM r.server_received_at) * 1000000)::bigint::text AS arrived,
                  r.phone_order, r.chain_balance::text AS chain_balance, r.parsed_amount::text AS parsed_amount, r.parsed_fee::text AS parsed_fee, r.direction, r.chain_state, r.resolution
             FROM sms_records r
            WHERE r.device_id = q.device_id AND r.wallet_key = q.wallet AND r.chain_balance IS NOT NULL AND r.id <> q.id
              AND (r.sms_time, r.server_received_at, r.phone_order, r.id) > (q.sms_time, me.server_received_at, me.phone_order, q.id)
            ORDER BY r.sms_time, r.server_received_at, r.phone_order, r.id LIMIT 1) n ON true`,
);

/** The stored links either side of each record (in chain order), each record with its own request's arrival and phone order. */
export async function chainLinksAround(tx: Db, records: ReadonlyArray<{ id: number; device_id: number; wallet: string; sms_time: string }>): Promise<LinkRow[]> {
  return chainLinks(tx, [JSON.stringify(records)]);
}

/** Moves a chain's head to its newest link with a balance. */
export async function moveChainHead(tx: Db, head: { id: number | null; balance: string | null; at: Date; broken: boolean; deviceId: number; wallet: string }): Promise<void> {
  await moveHead.execute(tx, head);
}

/**
 * Marks `from` and the run of `after_break` links right after it `repaired`:
 * they follow, link by link, from an SMS that filled the gap. The run ends at
 * the first link that broke the chain on its own (or a trusted one). Their
 * records keep their status: a decision already made is not re-opened.
 */
export async function repairChain(tx: Db, q: { deviceId: number; wallet: string; from: number }): Promise<void> {
  // Raw: row-value comparisons over the chain's order, which the builder cannot say.
  await sql`
    WITH start AS (SELECT sms_time, server_received_at, phone_order, id FROM sms_records WHERE id = ${q.from}),
    stop AS (
      SELECT r.sms_time, r.server_received_at, r.phone_order, r.id FROM sms_records r, start s
       WHERE r.device_id = ${q.deviceId} AND r.wallet_key = ${q.wallet} AND r.chain_balance IS NOT NULL
         AND (r.sms_time, r.server_received_at, r.phone_order, r.id) > (s.sms_time, s.server_received_at, s.phone_order, s.id) AND r.chain_state IS DISTINCT FROM 'after_break'
       ORDER BY r.sms_time, r.server_received_at, r.phone_order, r.id LIMIT 1)
    UPDATE sms_records r SET chain_state = 'repaired', updated_at = now()
      FROM start s
     WHERE r.device_id = ${q.deviceId} AND r.wallet_key = ${q.wallet} AND r.chain_balance IS NOT NULL
       AND (r.sms_time, r.server_received_at, r.phone_order, r.id) >= (s.sms_time, s.server_received_at, s.phone_order, s.id)
       AND (NOT EXISTS (SELECT 1 FROM stop) OR (r.sms_time, r.server_received_at, r.phone_order, r.id) < (SELECT t.sms_time, t.server_received_at, t.phone_order, t.id FROM stop t))
       AND (r.id = ${q.from} OR r.chain_state = 'after_break')`.execute(tx);
}
