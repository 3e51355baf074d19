import { z } from 'zod';
import { AppError } from '../../../contract/common/errors.ts';
import { sql } from 'kysely';
import type { EntityManager } from '../../infra/database/orm.ts';
import { db } from '../db.ts';

/**
 * Service-wide settings: the `settings` table maps a key to a jsonb value, and
 * every key has a schema and a default here, so a missing row is never an error
 * and a bad stored value never reaches a caller (it falls back to the default).
 * Add a key by adding an entry; its schema documents the allowed range.
 */
const settingDefinitions = {
  /** Lifetime of a new payment intent when the merchant does not give one. */
  intent_expiry_minutes: { schema: z.number().int().min(1).max(43_200), default: 60 },
  /**
   * Retired: only certain SMS evidence completes a payment (confidence 1), so no
   * threshold can let anything less through. Still accepted and stored so the
   * settings API and existing clients stay valid; matching ignores it.
   */
  match_threshold: { schema: z.number().min(0).max(1), default: 0.8 },
  /** How long before an SMS a transaction may have been created and still match it. */
  match_window_minutes: { schema: z.number().int().min(1).max(43_200), default: 1440 },
  /** Clock skew tolerated by the timing rule after a phone's offset is corrected (docs/matching.md). */
  match_clock_grace_seconds: { schema: z.number().int().min(0).max(3600), default: 300 },
  /** A device silent for longer than this is offline. */
  device_offline_minutes: { schema: z.number().int().min(1).max(10_080), default: 60 },
  /** A heartbeat reporting a battery below this percentage (not charging) raises one `battery_low` alert per episode. */
  battery_low_percent: { schema: z.number().int().min(1).max(99), default: 15 },
  /** A payment awaiting verification longer than this raises one `review_waiting` alert. */
  review_waiting_minutes: { schema: z.number().int().min(1).max(10_080), default: 30 },
  /** Format-change alarm (docs/sms-presets.md): the recent window, the least messages in it, and the rise of the unparsed share over the baseline day that raises it. */
  sms_alarm_window_minutes: { schema: z.number().int().min(5).max(1440), default: 60 },
  sms_alarm_min_messages: { schema: z.number().int().min(1).max(10_000), default: 5 },
  sms_alarm_rise: { schema: z.number().min(0.05).max(1), default: 0.5 },
} as const satisfies Record<string, { schema: z.ZodType; default: unknown }>;

export type SettingKey = keyof typeof settingDefinitions;
export type SettingValue<K extends SettingKey> = z.output<(typeof settingDefinitions)[K]['schema']>;
export type Settings = { [K in SettingKey]: SettingValue<K> };

export const settingKeys = Object.keys(settingDefinitions) as SettingKey[];

/** A stored value (or undefined when there is no row) as its effective setting: the default when missing or invalid. */
export function parseStored<K extends SettingKey>(key: K, value: unknown): SettingValue<K> {
  const def = settingDefinitions[key];
  const parsed = def.schema.safeParse(value);
  return (parsed.success ? parsed.data : def.default) as SettingValue<K>;
}

export async function getSetting<K extends SettingKey>(em: EntityManager, key: K): Promise<SettingValue<K>> {
  const row = await db(em).selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? parseStored(key, row.value) : (settingDefinitions[key].default as SettingValue<K>);
}

/** Every setting with its effective value (stored, or the default). */
export async function getSettings(em: EntityManager): Promise<Settings> {
  const rows = await db(em).selectFrom('settings').select(['key', 'value']).where('key', 'in', settingKeys).execute();
  return effectiveSettings(new Map(rows.map((r) => [r.key, r.value])));
}

/** getSettings from stored values (key -> value) a caller read in a statement of its own. */
export function effectiveSettings(stored: ReadonlyMap<string, unknown>): Settings {
  const out: Record<string, unknown> = {};
  for (const key of settingKeys) {
    out[key] = stored.has(key) ? parseStored(key, stored.get(key)) : settingDefinitions[key].default;
  }
  return out as Settings;
}

/** Validates and stores one setting; a bad value is a VALIDATION_ERROR naming the key. */
export async function setSetting<K extends SettingKey>(em: EntityManager, key: K, value: unknown): Promise<SettingValue<K>> {
  const def = settingDefinitions[key];
  if (!def) throw new AppError('VALIDATION_ERROR', `Unknown setting \`${String(key)}\``, { field: String(key) });
  const parsed = def.schema.safeParse(value);
  if (!parsed.success) {
    throw new AppError('VALIDATION_ERROR', parsed.error.issues[0]?.message ?? 'Invalid value', { field: key });
  }
  await db(em)
    .insertInto('settings')
    .values({ key, value: parsed.data, updated_at: sql<Date>`now()` })
    .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ value: eb.ref('excluded.value'), updated_at: sql<Date>`now()` })))
    .execute();
  return parsed.data as SettingValue<K>;
}
