import { z } from 'zod';
import { AppError } from '../../../contract/common/errors.ts';
import { settingDefaults, settingFields } from '../../../contract/admin/settings.ts';
import { type Db } from '../db.ts';
import { storedSetting, storedSettings, upsertSetting } from './queries.ts';

/**
 * Service-wide settings: the `settings` table maps a key to a jsonb value. The
 * admin contract declares every key with its schema and default
 * (contract/admin/settings.ts), so a missing row is never an error and a bad
 * stored value never reaches a caller (it falls back to the default). Add a key
 * there. `match_threshold` is retired: only certain SMS evidence completes a
 * payment, so matching ignores it; it stays accepted so existing clients do.
 */
const settingDefinitions = Object.fromEntries(
  Object.entries(settingFields).map(([key, schema]) => [key, { schema, default: settingDefaults[key as keyof typeof settingFields] }]),
) as { [K in keyof typeof settingFields]: { schema: (typeof settingFields)[K]; default: (typeof settingDefaults)[K] } };

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

export async function getSetting<K extends SettingKey>(em: Db, key: K): Promise<SettingValue<K>> {
  const row = await storedSetting(em, key);
  return row ? parseStored(key, row.value) : (settingDefinitions[key].default as SettingValue<K>);
}

/** Every setting with its effective value (stored, or the default). */
export async function getSettings(em: Db): Promise<Settings> {
  return effectiveSettings(await storedSettings(em, settingKeys));
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
export async function setSetting<K extends SettingKey>(em: Db, key: K, value: unknown): Promise<SettingValue<K>> {
  const def = settingDefinitions[key];
  if (!def) throw new AppError('VALIDATION_ERROR', `Unknown setting \`${String(key)}\``, { field: String(key) });
  const parsed = def.schema.safeParse(value);
  if (!parsed.success) {
    throw new AppError('VALIDATION_ERROR', parsed.error.issues[0]?.message ?? 'Invalid value', { field: key });
  }
  await upsertSetting(em, key, parsed.data);
  return parsed.data as SettingValue<K>;
}
