import { errorEnvelopeSchema } from './envelope.ts';

/**
 * Error responses every route of a surface can return. Routes add the ones
 * that are theirs (404, 409, 422...) in their own `responses`.
 */
export const commonErrorResponses = {
  400: errorEnvelopeSchema,
  401: errorEnvelopeSchema,
  413: errorEnvelopeSchema,
  415: errorEnvelopeSchema,
  429: errorEnvelopeSchema,
  500: errorEnvelopeSchema,
  503: errorEnvelopeSchema,
} as const;

/** Public routes take no credential, so they never answer 401. */
export const publicErrorResponses = {
  400: errorEnvelopeSchema,
  413: errorEnvelopeSchema,
  415: errorEnvelopeSchema,
  429: errorEnvelopeSchema,
  500: errorEnvelopeSchema,
  503: errorEnvelopeSchema,
} as const;
