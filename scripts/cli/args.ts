import type { ParseArgsConfig } from 'node:util';

/** A mistake in how the CLI was called (exit 64); never an API error. */
export class UsageError extends Error {}

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

const str = (v: Values, name: string): string | undefined => {
  const value = v[name];
  if (Array.isArray(value)) return value[value.length - 1];
  return typeof value === 'string' ? value : undefined;
};

export function need(v: Values, name: string): string {
  const value = str(v, name);
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function opt(v: Values, name: string): string | undefined {
  return str(v, name);
}

/** A positive whole number (ids, minutes, pages); range rules beyond that are the API's. */
export function positiveInt(v: Values, name: string, required: true): number;
export function positiveInt(v: Values, name: string, required?: false): number | undefined;
export function positiveInt(v: Values, name: string, required = false): number | undefined {
  const raw = str(v, name);
  if (raw === undefined) {
    if (required) throw new UsageError(`--${name} must be a positive whole number`);
    return undefined;
  }
  if (!/^[0-9]{1,15}$/.test(raw) || Number(raw) < 1) throw new UsageError(`--${name} must be a positive whole number`);
  return Number(raw);
}

/** A plain decimal number (the match threshold); money stays a string and is checked by the API. */
export function decimalNumber(v: Values, name: string): number | undefined {
  const raw = str(v, name);
  if (raw === undefined) return undefined;
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw)) throw new UsageError(`--${name} must be a number such as 0.8`);
  return Number(raw);
}

/** `a,b,c` -> ['a','b','c']; an empty string is an empty list (`--senders ""` clears). */
export function list(v: Values, name: string): string[] | undefined {
  const raw = str(v, name);
  if (raw === undefined) return undefined;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function oneOf<T extends string>(v: Values, name: string, allowed: readonly T[]): T | undefined {
  const raw = str(v, name);
  if (raw === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(raw)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return raw as T;
}

/** `--enable` / `--disable` into enabled true/false (or undefined when neither). */
export function toggle(v: Values, on: string, off: string): boolean | undefined {
  if (v[on] && v[off]) throw new UsageError(`--${on} and --${off} exclude each other`);
  return v[on] ? true : v[off] ? false : undefined;
}

/** Drops undefined members, so a body carries only what was given. */
export function defined<T extends Record<string, unknown>>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, value]) => value !== undefined)) as never;
}

export const pageOptions: Options = { page: { type: 'string' }, 'per-page': { type: 'string' } };
export const pageHelp = '[--page <n>] [--per-page <1-100>]';

export function pageQuery(v: Values): { page?: number; per_page?: number } {
  return defined({ page: positiveInt(v, 'page'), per_page: positiveInt(v, 'per-page') });
}
