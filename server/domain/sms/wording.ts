/**
 * How wallets write their SMS, as pure functions (no database): sender
 * spellings, templates and the presets of the known wallets. Gateways and
 * filter rules are built on them, and SMS matching on gateways, so this is a
 * second way into the SMS module, below the rest of it (index.ts); the lint
 * allows these two only.
 */
export { sameSender, senderKey } from './templates/senders.ts';
export { compileTemplate } from './templates/template.ts';
export { GATEWAY_PRESETS, defaultGatewayTemplates } from './templates/presets/index.ts';
export { checkAgainstMoneyOut, expandPreset } from './templates/presets/gateway-input.ts';
