import { AppError } from '../../../contract/common/errors.ts';
import type { Mode } from '../../../contract/vocabulary.ts';
import { createGateway, getGateway, type GatewayInput, type GatewayView } from '../gateways/service.ts';
import type { Db } from '../db.ts';

export const SANDBOX_GATEWAY_CODE = 'sandbox';

/**
 * Which gateways the built-in sandbox drives. The sandbox is the only redirect
 * (automatic) gateway integration the service ships, so every `automatic`
 * gateway is served by it: redirect to the sandbox page, signed callback,
 * refunds completed by a job. A real redirect gateway would need its own driver
 * and a column saying which driver a gateway uses.
 */
export function isSandboxDriven(gateway: Pick<GatewayView, 'type'>): boolean {
  return gateway.type === 'automatic';
}

/**
 * Whether a payment of this mode may use the gateway: the sandbox moves no
 * money, so a live payment is never offered it (checkout options, payment
 * creation) and can never start on it; a test payment may use every gateway.
 */
export function gatewayServesMode(gateway: Pick<GatewayView, 'type'>, mode: Mode): boolean {
  return mode === 'test' || !isSandboxDriven(gateway);
}

export function gatewaysOfMode<G extends Pick<GatewayView, 'type'>>(gateways: readonly G[], mode: Mode): G[] {
  return gateways.filter((g) => gatewayServesMode(g, mode));
}

const sandboxGatewayInput: GatewayInput = {
  code: SANDBOX_GATEWAY_CODE,
  name: 'Sandbox (test card)',
  type: 'automatic',
  methods: ['card'],
  currencies: ['BDT', 'USD'],
  min_amount: '1.00',
  max_amount: '100000.00',
  fee_percent: '2.5',
  fee_fixed: '0.00',
  sort_order: 100,
};

/**
 * Creates the built-in `sandbox` gateway unless one with that code exists (then
 * it is left as an admin may have changed it). For first runs and demo seeds;
 * not a migration, because a production deployment should not offer test
 * payments to its customers unless an admin adds the gateway on purpose.
 */
export async function ensureSandboxGateway(em: Db): Promise<GatewayView> {
  try {
    return await getGateway(em, SANDBOX_GATEWAY_CODE);
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'GATEWAY_NOT_FOUND') throw err;
  }
  try {
    return await createGateway(em, sandboxGatewayInput);
  } catch (err) {
    // Two processes seeding at once: the other one won.
    if (err instanceof AppError && err.code === 'CONFLICT') return getGateway(em, SANDBOX_GATEWAY_CODE);
    throw err;
  }
}
