import { z } from 'zod';
import { modes } from '../vocabulary.ts';

/** Test or live mode (the vocabulary's `modes`). */
export const modeSchema = z.enum(modes).describe('`live` or `test`.');

/** Stripe's name for it: true for live-mode objects, false for test-mode ones. */
export const livemodeSchema = z.boolean().describe('True for a live-mode object, false for a test-mode one (created with a `sk_test_` key, paid on the sandbox or verified by a test device).');
