import { sql } from 'kysely';
import type { Mode } from '../../../../contract/vocabulary.ts';
import type { Db } from '../../db.ts';
import { scopeParam } from '../../brands/scope.ts';
import { smsTimeOf } from '../matching/queries/records.ts';

/** The format-change alarm's reads and writes (format-alarm.ts). */

/**
 * Decided originals (newest first, at most `limit`) of the recent window and
 * the baseline before it, each marked `recent` or not by the database's clock.
 */
export async function decidedRecordsSince(db: Db, q: { windowMinutes: number; baselineMinutes: number; limit: number }) {
  return db
    .selectFrom('sms_records as r')
    .select(['r.brand_id', 'r.mode', 'r.device_id', 'r.device_message_id', 'r.sender', 'r.match_status'])
    .select(sql<boolean>`r.server_received_at >= now() - make_interval(mins => ${q.windowMinutes})`.as('recent'))
    .where('r.server_received_at', '>=', sql<Date>`now() - make_interval(mins => ${q.windowMinutes + q.baselineMinutes})`)
    .where('r.match_status', '<>', 'pending')
    .where('r.duplicate_of_id', 'is', null)
    .where('r.text_expired_at', 'is', null)
    .orderBy('r.server_received_at', 'desc')
    .limit(q.limit)
    .execute();
}

export interface AlarmKey {
  brandId: number;
  mode: Mode;
  gatewayId: number;
  sender: string;
}

/** Clears the open episode of the key; returns how many were cleared (0 or 1). */
export async function clearOpenAlarm(db: Db, k: AlarmKey): Promise<number> {
  const done = await db
    .updateTable('sms_format_alarms')
    .set({ cleared_at: sql<Date>`now()` })
    .where('brand_id', '=', k.brandId)
    .where('mode', '=', k.mode)
    .where('gateway_id', '=', k.gatewayId)
    .where('sender', '=', k.sender)
    .where('cleared_at', 'is', null)
    .returning('id')
    .execute();
  return done.length;
}

/** Opens an episode; undefined when one is open already (the partial unique index sms_format_alarms_one_open). */
export async function openAlarm(
  tx: Db,
  k: AlarmKey,
  figures: { windowMinutes: number; unparsed: number; total: number; share: string; baselineShare: string },
): Promise<{ id: number; raised_at: Date } | undefined> {
  return tx
    .insertInto('sms_format_alarms')
    .values({
      brand_id: k.brandId,
      mode: k.mode,
      gateway_id: k.gatewayId,
      sender: k.sender,
      window_minutes: figures.windowMinutes,
      unparsed: figures.unparsed,
      total: figures.total,
      share: figures.share,
      baseline_share: figures.baselineShare,
    })
    // The index is partial: its predicate names it.
    .onConflict((oc) => oc.columns(['brand_id', 'mode', 'gateway_id', 'sender']).where('cleared_at', 'is', null).doNothing())
    .returning(['id', 'raised_at'])
    .executeTakeFirst();
}

/** The newest 200 alarms with their gateway's code, optionally of one brand and open or cleared. */
export async function alarmRows(db: Db, filter: { brandId?: number; open?: boolean }) {
  let q = db
    .selectFrom('sms_format_alarms as a')
    .innerJoin('gateways as g', 'g.id', 'a.gateway_id')
    .select(['a.id', 'a.brand_id', 'a.mode', 'g.code', 'a.sender', 'a.window_minutes', 'a.unparsed', 'a.total', 'a.share', 'a.baseline_share', 'a.raised_at', 'a.cleared_at'])
    .orderBy('a.raised_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(200);
  if (filter.brandId !== undefined) q = q.where('a.brand_id', '=', filter.brandId);
  if (filter.open !== undefined) q = q.where('a.cleared_at', filter.open ? 'is' : 'is not', null);
  return q.execute();
}

/**
 * Records of the window, newest first, originals only. Every sender: the sender
 * is encrypted, so whether it is one of the gateway's official ones is decided
 * after decryption; and a record another gateway with the same sender read
 * first is still read by this one's templates.
 */
export async function recentOriginals(em: Db, days: number, limit: number, brands: number[] | null) {
  return em
    .selectFrom('sms_records as r')
    .innerJoin('devices as d', 'd.id', 'r.device_id')
    .select(['r.id', 'r.brand_id', 'r.mode', 'r.device_id', 'r.device_message_id', 'r.sender', 'r.body_encrypted', 'r.chain_state'])
    .select(sql<Date>`COALESCE(r.sms_time, ${smsTimeOf})`.as('sms_time'))
    .where('r.server_received_at', '>=', sql<Date>`now() - make_interval(days => ${days})`)
    .where('r.duplicate_of_id', 'is', null)
    // A record whose text expired has nothing left to read again.
    .where('r.text_expired_at', 'is', null)
    // An operator limited to some brands reads only their messages.
    .$if(brands !== null, (q) => q.where('r.brand_id', 'in', scopeParam(brands ?? [])))
    .orderBy('r.server_received_at', 'desc')
    .orderBy('r.id', 'desc')
    .limit(limit + 1)
    .execute();
}
