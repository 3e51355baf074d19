import { bkash, nagad, rocket } from './major.ts';
import { GATEWAY_PRESETS } from './list.ts';
import type { GatewayPreset } from './types.ts';

export type { GatewayPreset } from './types.ts';
export { classifySms, type SmsClassification } from './classify.ts';

export { GATEWAY_PRESETS } from './list.ts';

export function findPreset(code: string): GatewayPreset | undefined {
  return GATEWAY_PRESETS.find((p) => p.code === code);
}

/** The preset's templates as a gateway stores them (without the `verified` note). */
export function presetTemplates(preset: GatewayPreset) {
  return preset.templates.map(({ pattern, flags, direction, kind }) => ({ pattern, flags, direction, kind }));
}

/**
 * The three wallets most brands start with, shaped as a gateway stores them; the
 * first-run demo brand, the CLI's `--preset`, the test seed and benchmarks use
 * these rather than copies of their own.
 */
export const defaultGatewayTemplates = {
  bkash: { senders: [...bkash.senders], templates: presetTemplates(bkash) },
  nagad: { senders: [...nagad.senders], templates: presetTemplates(nagad) },
  rocket: { senders: [...rocket.senders], templates: presetTemplates(rocket) },
};
