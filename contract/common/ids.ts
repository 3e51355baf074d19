import { z } from 'zod';

/** ISO 8601 UTC timestamp ending in `Z`. */
export const timestampSchema = z.iso
  .datetime({ offset: false })
  .describe('ISO 8601 UTC timestamp.')
  .meta({ examples: ['2026-11-21T10:15:30.000Z'] });

export const uuidSchema = z.uuid().describe('UUID.');

export function toTimestamp(d: Date): string;
export function toTimestamp(d: Date | null | undefined): string | null;
export function toTimestamp(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}
