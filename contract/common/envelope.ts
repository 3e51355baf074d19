import { z } from 'zod';
import { errorCodes } from './errors.ts';

/** One problem with a request; `field` names the offending value or is null. */
export const errorItemSchema = z
  .object({
    code: z.enum(errorCodes).describe('Machine-readable error code (see the error code table).'),
    message: z.string().describe('Human-readable message.'),
    field: z
      .string()
      .nullable()
      .describe('Dotted path of the offending value (`amount`, `customer.email`, `per_page`), or null when not tied to a field.'),
  })
  .meta({ id: 'ErrorItem' });

/** The error envelope of every failed request, on every surface. */
export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.string().describe('Human-readable message of the first error.'),
    errors: z.array(errorItemSchema).min(1),
    request_id: z.string().describe('Identifier of the request; also sent as the `X-Request-Id` header.'),
  })
  .meta({ id: 'ErrorEnvelope' });

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** `{success: true, data}` around a resource schema. */
export function ok<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

/** `{success: true, data: [...], meta}` for lists. */
export function okList<T extends z.ZodType, M extends z.ZodType>(item: T, meta: M) {
  return z.object({ success: z.literal(true), data: z.array(item), meta });
}
