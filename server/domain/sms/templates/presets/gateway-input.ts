import { AppError } from '../../../../../contract/common/errors.ts';
import { compileTemplate, type SmsTemplateSource } from '../template.ts';
import { findPreset, GATEWAY_PRESETS, presetTemplates } from './index.ts';

type Template = Required<Pick<SmsTemplateSource, 'pattern' | 'flags' | 'direction'>> & Pick<SmsTemplateSource, 'kind'>;

/**
 * A gateway written from a preset: the preset's senders and templates first,
 * then any the admin gave (an admin may add a wording the preset lacks). No
 * preset: the admin's own lists, unchanged.
 */
export function expandPreset<T extends Template>(code: string | undefined, senders: string[], templates: T[]): { sms_senders: string[]; sms_templates: Array<T | Template> } {
  if (code === undefined) return { sms_senders: senders, sms_templates: templates };
  const preset = findPreset(code);
  if (!preset) {
    throw new AppError('VALIDATION_ERROR', `Unknown preset "${code}"; known: ${GATEWAY_PRESETS.map((p) => p.code).join(', ')}`, { field: 'preset' });
  }
  const own = new Set(preset.senders.map((s) => s.toLowerCase()));
  return {
    sms_senders: [...preset.senders, ...senders.filter((s) => !own.has(s.toLowerCase()))],
    sms_templates: [...presetTemplates(preset), ...templates],
  };
}

/**
 * A money-in template that reads a wallet's own debit (Send Money, Payment,
 * bill pay) as a credit would let the shop's own spending complete payments:
 * refused, naming the template.
 */
export function checkAgainstMoneyOut(templates: readonly SmsTemplateSource[]): void {
  templates.forEach((t, i) => {
    if ((t.direction ?? 'in') !== 'in') return;
    const re = compileTemplate(t.pattern, t.flags ?? '', 'in');
    for (const preset of GATEWAY_PRESETS) {
      const hit = preset.outSamples.find((sample) => re.test(sample));
      if (hit !== undefined) {
        throw new AppError('VALIDATION_ERROR', `This money-in template also matches ${preset.name}'s own money-out message "${hit.slice(0, 40)}..."; anchor it to the money-in wording`, {
          field: `sms_templates.${i}.pattern`,
        });
      }
    }
  });
}
