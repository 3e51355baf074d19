import { z } from 'zod';

/**
 * A whole number in a query string. Strict on purpose: `"1.5"`, `"1e1"`, `" 2"`,
 * `"0x10"` are rejected rather than coerced, and out-of-range values are a 400
 * naming the field, never silently clamped.
 */
export function intQuery(opts: { min: number; max?: number; description: string }) {
  const range = opts.max === undefined ? `at least ${opts.min}` : `between ${opts.min} and ${opts.max}`;
  const inner = z
    .number()
    .int()
    .min(opts.min, `Must be ${range}`)
    .max(opts.max ?? Number.MAX_SAFE_INTEGER, `Must be ${range}`);
  return z
    .string()
    .regex(/^[0-9]{1,15}$/, `Must be a whole number ${range}`)
    .transform(Number)
    .pipe(inner)
    .describe(opts.description);
}

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

/** `page` (default 1, >= 1) and `per_page` (default 20, 1..100). */
export const pageQuerySchema = z.object({
  page: intQuery({ min: 1, description: 'Page number, starting at 1. Default 1.' }).optional().default(1),
  per_page: intQuery({ min: 1, max: MAX_PER_PAGE, description: 'Records per page, 1 to 100. Default 20.' })
    .optional()
    .default(DEFAULT_PER_PAGE),
});

export const pageMetaSchema = z
  .object({
    page: z.number().int().min(1),
    per_page: z.number().int().min(1).max(MAX_PER_PAGE),
    total: z.number().int().min(0).describe('Total number of records matching the filters.'),
  })
  .meta({ id: 'PageMeta' });

export const pageMetaWithPagesSchema = pageMetaSchema
  .extend({ total_pages: z.number().int().min(0).describe('Number of pages at this `per_page`.') })
  .meta({ id: 'PageMetaWithPages' });

export type PageQuery = z.output<typeof pageQuerySchema>;
export type PageMeta = z.infer<typeof pageMetaSchema>;

/** A `YYYY-MM-DD` calendar date (UTC). */
export const dateQuery = (description: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, 'Must be a date YYYY-MM-DD')
    .refine((s) => {
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s);
    }, 'Must be a real calendar date YYYY-MM-DD')
    .describe(description);
