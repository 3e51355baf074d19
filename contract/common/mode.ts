import { z } from 'zod';

/**
 * Test or live mode. Every payment object belongs to one mode; an API key
 * sees and creates only objects of its own mode (`sk_test_…` test, `sk_live_…`
 * live), and the `sandbox` gateway exists only in test mode.
 */
export const modes = ['live', 'test'] as const;
export type Mode = (typeof modes)[number];
export const modeSchema = z.enum(modes).describe('`live` or `test`.');

/** Stripe's name for it: true for live-mode objects, false for test-mode ones. */
export const livemodeSchema = z.boolean().describe('True for a live-mode object, false for a test-mode one (created with a `sk_test_` key, paid on the sandbox or verified by a test device).');
