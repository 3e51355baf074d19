import type { SmsTemplateSource } from '../template.ts';

interface PresetTemplate extends Required<Pick<SmsTemplateSource, 'pattern' | 'flags' | 'direction' | 'kind'>> {
  /** False when no public source showed this wording: a conservative guess, documented in docs/sms-presets.md. */
  verified: boolean;
}

export interface GatewayPreset {
  /** Stable code (`bkash`); also the suggested gateway code. */
  code: string;
  name: string;
  /** Official sender ids, compared with `sameSender` (senders.ts). */
  senders: string[];
  templates: PresetTemplate[];
  /**
   * The wallet's own money-out messages as published (docs/sms-presets.md):
   * an admin's money-in template that reads any of them is refused.
   */
  outSamples: string[];
}
