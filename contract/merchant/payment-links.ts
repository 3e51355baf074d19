import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  amountInputSchema,
  amountSchema,
  currencySchema,
  livemodeSchema,
  meta,
  ok,
  okList,
  pageMetaWithPagesSchema,
  pageQuerySchema,
  timestampSchema,
} from '../common/index.ts';
import { redirectUrl } from './payments.ts';

const c = initContract();

export const createPaymentLinkBodySchema = z
  .strictObject({
    amount: amountInputSchema.optional().describe('Fixed amount. Leave it out for a customer-entered amount (then `min_amount`/`max_amount` bound it).'),
    min_amount: amountInputSchema.optional().describe('Customer-entered amount: the smallest accepted. Default "0.01".'),
    max_amount: amountInputSchema.optional().describe('Customer-entered amount: the largest accepted. Default no bound (the gateways still apply theirs).'),
    currency: currencySchema,
    single_use: z.boolean().optional().describe('True: one payment only (the first visit that creates a payment uses the link; further visits are refused while that payment is open or paid). Default false (reusable).'),
    expires_at: timestampSchema.optional().describe('When the link stops creating payments. Default never.'),
    reference: z.string().trim().min(1).max(255).optional().describe('Copied to every payment the link creates.'),
    description: z.string().trim().min(1).max(500).optional().describe('Shown to the customer on the link page.'),
    success_url: redirectUrl('Where the customer is sent after paying.').optional(),
    cancel_url: redirectUrl('Where the customer is sent on cancelling.').optional(),
  })
  .meta({ id: 'CreatePaymentLinkRequest' });

export const paymentLinkSchema = z
  .object({
    id: z.string().describe('Public id of the link: `plink_` and 24 random hex digits (96 bits: unguessable, it is the link\'s only credential).'),
    url: z.string().describe('Public URL of the link: print it or share it.'),
    qr_svg_url: z.string().describe('QR code of `url`, SVG.'),
    qr_png_url: z.string().describe('QR code of `url`, PNG.'),
    amount: amountSchema.nullable().describe('Fixed amount, or null when the customer enters it.'),
    min_amount: amountSchema.nullable(),
    max_amount: amountSchema.nullable(),
    currency: currencySchema,
    single_use: z.boolean(),
    expires_at: timestampSchema.nullable(),
    reference: z.string().nullable(),
    description: z.string().nullable(),
    success_url: z.string().nullable(),
    cancel_url: z.string().nullable(),
    active: z.boolean().describe('False once deactivated.'),
    status: z.enum(['active', 'used', 'expired', 'inactive']).describe('`active`: visits create payments; `used`: a single-use link whose payment is open or paid; `expired`; `inactive`: deactivated.'),
    payments_created: z.number().int().min(0).describe('Payments created through the link.'),
    created_at: timestampSchema,
    livemode: livemodeSchema,
  })
  .meta({ id: 'PaymentLink' });

export type PaymentLinkResource = z.infer<typeof paymentLinkSchema>;

export const paymentLinksContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/payment-links',
      summary: 'Create a payment link',
      description:
        'A link with a fixed or customer-entered amount, single use or reusable, optionally expiring, with its public URL and QR codes. Each visit creates a payment and continues on the normal checkout.',
      body: createPaymentLinkBodySchema,
      responses: { 201: ok(paymentLinkSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Payment links', errors: ['CURRENCY_NOT_SUPPORTED', 'AMOUNT_EXCEEDS_MAXIMUM'] }),
    },
    list: {
      method: 'GET',
      path: '/payment-links',
      summary: 'List payment links',
      description: 'Payment links of the calling brand and mode, newest first.',
      query: z.strictObject({ ...pageQuerySchema.shape }),
      responses: { 200: okList(paymentLinkSchema, pageMetaWithPagesSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Payment links' }),
    },
    get: {
      method: 'GET',
      path: '/payment-links/:id',
      summary: 'Get a payment link',
      description: "One payment link of the calling brand and mode by its `plink_...` id, active or deactivated. `PAYMENT_LINK_NOT_FOUND` for an unknown id, another brand's link or a link of the other mode.",
      pathParams: z.object({ id: z.string().describe('Payment link id (`plink_...`).') }),
      responses: { 200: ok(paymentLinkSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Payment links', errors: ['PAYMENT_LINK_NOT_FOUND'] }),
    },
    deactivate: {
      method: 'POST',
      path: '/payment-links/:id/deactivate',
      summary: 'Deactivate a payment link',
      description: 'The link stops creating payments (its page says so); payments it already created are unaffected. Repeating it is harmless.',
      pathParams: z.object({ id: z.string().describe('Payment link id (`plink_...`).') }),
      body: c.noBody(),
      responses: { 200: ok(paymentLinkSchema) },
      metadata: meta({ auth: 'merchant', tag: 'Payment links', errors: ['PAYMENT_LINK_NOT_FOUND'] }),
    },
  },
  { pathPrefix: '/api/v1', strictStatusCodes: true },
);
