import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { amountSchema, currencySchema, meta, ok, timestampSchema } from '../common/index.ts';
import { paymentStatuses } from '../vocabulary.ts';
import { CHECKOUT_PATH_PREFIX } from './payments.ts';

const c = initContract();

export const SANDBOX_SIGNATURE_HEADER = 'X-Sandbox-Signature';
export const SANDBOX_CALLBACK_PATH = `${CHECKOUT_PATH_PREFIX}/gateways/sandbox/callbacks`;
/** Seconds a callback's signed timestamp may differ from the service clock. */
export const SANDBOX_SIGNATURE_TOLERANCE_SECONDS = 300;

/** What the sandbox gateway reports about one payment it handled. */
export const sandboxCallbackSchema = z
  .strictObject({
    outcome: z.enum(['approved', 'declined']).describe('What the customer chose on the sandbox page.'),
    trx_id: z.string().min(1).max(32).describe('The service transaction reference the sandbox was asked to collect.'),
    gateway_trx_id: z.string().min(1).max(100).describe("The sandbox's own transaction id."),
    amount: amountSchema.describe('Amount the sandbox collected (or was asked to), in `currency`.'),
    currency: currencySchema,
    reason: z.string().max(500).nullable().describe('Declines: why.'),
    decided_at: timestampSchema,
  })
  .meta({ id: 'SandboxCallback' });

export const sandboxCallbackResultSchema = z
  .object({
    trx_id: z.string(),
    status: z.enum(paymentStatuses).describe('Transaction status after the callback.'),
    changed: z.boolean().describe('False when the callback repeated one already applied (nothing changed).'),
  })
  .meta({ id: 'SandboxCallbackResult' });

export const sandboxContract = c.router(
  {
    callback: {
      method: 'POST',
      path: '/gateways/sandbox/callbacks',
      summary: 'Sandbox gateway callback',
      description: [
        'Called by the built-in sandbox gateway (not by browsers) when the customer approves or declines on the sandbox page:',
        'an approval completes the transaction, a decline fails it.',
        `Signed: \`${SANDBOX_SIGNATURE_HEADER}: t=<unix seconds>,v1=<hex HMAC-SHA256 of "{t}.{raw body}" with SANDBOX_CALLBACK_SECRET>\`;`,
        `a missing, malformed or wrong signature, or a timestamp more than ${SANDBOX_SIGNATURE_TOLERANCE_SECONDS} seconds off, is 401 \`INVALID_SIGNATURE\`.`,
        'A repeated callback changes nothing and answers 200 with `changed: false`; one that contradicts the recorded outcome, or whose amount differs, is `INVALID_STATE`.',
      ].join(' '),
      headers: z.object({
        'x-sandbox-signature': z.string().optional().describe('`t=<unix seconds>,v1=<hex>` (required; checked before anything else).'),
      }),
      body: sandboxCallbackSchema,
      responses: { 200: ok(sandboxCallbackResultSchema) },
      metadata: meta({ auth: 'none', tag: 'Checkout', errors: ['INVALID_SIGNATURE', 'TRANSACTION_NOT_FOUND', 'INVALID_STATE', 'GATEWAY_TRX_ID_TAKEN'] }),
    },
  },
  { pathPrefix: CHECKOUT_PATH_PREFIX, strictStatusCodes: true },
);

export type SandboxCallback = z.infer<typeof sandboxCallbackSchema>;
