import { z } from 'zod';

/** ISO 8601 UTC timestamp ending in `Z`. */
export const timestampSchema = z.iso
  .datetime({ offset: false })
  .describe('ISO 8601 UTC timestamp.')
  .meta({ examples: ['2026-11-21T10:15:30.000Z'] });

export const uuidSchema = z.uuid().describe('UUID.');

/**
 * A UUID in its 8-4-4-4-12 hex form, either case. Ids taken from a path or a
 * token are checked against it before any lookup, so junk never reaches a
 * `uuid` column (PostgreSQL would reject the cast).
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID_PATTERN.test(s);
}

export function toTimestamp(d: Date): string;
export function toTimestamp(d: Date | null | undefined): string | null;
export function toTimestamp(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
