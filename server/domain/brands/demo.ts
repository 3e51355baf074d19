import { lockKey, transaction, type Db } from '../db.ts';
import type { PersonalDataKeys } from '../customers/keys.ts';
import { createApiKey, createBrand } from './service.ts';
import { countBrands, gatewayCodeExists } from './queries.ts';
import { createPairingCode } from '../devices/pairing.ts';
import { createGateway, getGateway, type GatewayInput, type GatewayView } from '../gateways/service.ts';
import { createIntent } from '../payments/intents.ts';
import { ensureSandboxGateway } from '../sandbox/gateway.ts';
import { defaultGatewayTemplates } from '../sms/wording.ts';
import { createWalletAccount, type WalletAccountView } from '../wallet-accounts/service.ts';

const DEMO_GATEWAY_CODE = 'bkash';
const DEMO_RECEIVING_ACCOUNT = '01700000000';

/** A manual, bKash-like wallet with the built-in "money received" template. */
const demoGatewayInput: GatewayInput = {
  code: DEMO_GATEWAY_CODE,
  name: 'bKash (demo)',
  type: 'manual',
  methods: ['send_money'],
  currencies: ['BDT'],
  min_amount: '10.00',
  max_amount: '25000.00',
  fee_percent: '1.85',
  fee_fixed: '0.00',
  receiving_account: DEMO_RECEIVING_ACCOUNT,
  instructions: `Send Money to ${DEMO_RECEIVING_ACCOUNT} with the bKash app, then enter the TrxID from your confirmation SMS.`,
  sms_senders: [...defaultGatewayTemplates.bkash.senders],
  sms_templates: defaultGatewayTemplates.bkash.templates.map((t) => ({ ...t })),
  sort_order: 10,
};

export interface DemoSeed {
  brandId: number;
  /** Test-mode key: the demo payment, the pairing code and the sandbox are test mode. */
  apiKey: string;
  /** Live-mode key: sees none of the demo's objects and is never offered the sandbox. */
  liveApiKey: string;
  pairingCode: string;
  pairingCodeExpiresAt: Date;
  gateways: GatewayView[];
  /** The demo brand's own account on the demo manual gateway (the number its checkout shows), bound to no phone. */
  walletAccount: WalletAccountView;
  paymentId: string;
  checkoutUrl: string;
  amount: string;
  currency: string;
}

async function ensureGateway(em: Db, input: GatewayInput): Promise<GatewayView> {
  // Looked up first: a unique violation would abort the surrounding transaction.
  return (await gatewayCodeExists(em, input.code)) ? getGateway(em, input.code) : createGateway(em, input);
}

/**
 * Seeds what a new user needs to try every flow: a demo brand with a test and a
 * live API key, the manual demo gateway and the sandbox gateway, the brand's
 * wallet account on the manual gateway (any of its phones proves payments into
 * it), a test-mode
 * pairing code (a day, so the phone can be paired later) and a test-mode payment
 * to open on the checkout page: the walk-through moves no money.
 * Runs once: under an advisory lock, and only while there is no brand at all,
 * so two processes starting on one empty database seed it once. Null when the
 * database already had a brand.
 */
export async function seedDemo(em: Db, keys: PersonalDataKeys, opts: { publicBaseUrl: string }): Promise<DemoSeed | null> {
  return transaction(em, async (tx) => {
    // Released at commit or rollback: concurrent first starts wait for each other.
    await lockKey(tx, 'paycollect:first-run');
    if ((await countBrands(tx)) > 0) return null;
    const brand = await createBrand(tx, { name: 'Demo Shop', timezone: 'Asia/Dhaka' });
    const { key } = await createApiKey(tx, brand.id, { name: 'demo test key', mode: 'test' });
    const { key: liveKey } = await createApiKey(tx, brand.id, { name: 'demo live key', mode: 'live' });
    const gateways = [await ensureGateway(tx, demoGatewayInput), await ensureSandboxGateway(tx)];
    const walletAccount = await createWalletAccount(tx, { actor: 'system:first-run', requestId: null }, brand.id, {
      gateway: DEMO_GATEWAY_CODE,
      number: DEMO_RECEIVING_ACCOUNT,
      accountType: 'personal',
      label: 'Demo bKash',
    });
    const pairing = await createPairingCode(tx, brand.id, { ttlMinutes: 24 * 60, mode: 'test' });
    const payment = await createIntent(
      tx,
      keys,
      brand.id,
      'test',
      { amount: '500.00', currency: 'BDT', reference: 'demo-order-1', expiresIn: 24 * 3600, metadata: { demo: true } },
      { publicBaseUrl: opts.publicBaseUrl },
    );
    return {
      brandId: brand.id,
      apiKey: key,
      liveApiKey: liveKey,
      pairingCode: pairing.code,
      pairingCodeExpiresAt: pairing.expiresAt,
      gateways,
      walletAccount,
      paymentId: payment.payment_id,
      checkoutUrl: payment.checkout_url,
      amount: payment.amount,
      currency: payment.currency,
    };
  });
}
