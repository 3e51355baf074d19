import { bkash, nagad, rocket } from './major.ts';
import { cellfin, mcash, okwallet, pathaopay, tap, upay } from './others.ts';
import type { GatewayPreset } from './types.ts';

export type { GatewayPreset } from './types.ts';
export { classifySms, type SmsClassification } from './classify.ts';

/**
 * The wallets the service knows out of the box: official senders and the
 * wordings of their money-in and money-out SMS (docs/sms-presets.md lists the
 * public source of each).
 */
export const GATEWAY_PRESETS: readonly GatewayPreset[] = Object.freeze([bkash, nagad, rocket, upay, tap, okwallet, mcash, cellfin, pathaopay]);

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
