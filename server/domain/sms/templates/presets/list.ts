import { bkash, nagad, rocket } from './major.ts';
import { cellfin, mcash, okwallet, pathaopay, tap, upay } from './others.ts';
import type { GatewayPreset } from './types.ts';

/**
 * The wallets the service knows out of the box: official senders and the
 * wordings of their money-in and money-out SMS (docs/sms-presets.md lists the
 * public source of each). Kept apart from index.ts so that the template compiler
 * can read it without importing the classifier, which imports the parser.
 */
export const GATEWAY_PRESETS: readonly GatewayPreset[] = Object.freeze([bkash, nagad, rocket, upay, tap, okwallet, mcash, cellfin, pathaopay]);
