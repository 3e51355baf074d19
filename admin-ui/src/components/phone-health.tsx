import type { z } from 'zod';
import type { adminDeviceSchema } from '../../../contract/admin/devices.ts';
import { Badge, ago } from './ui.tsx';

/**
 * What breaks forwarding on a phone, from its heartbeats (README, Phone
 * diagnostics): a red "cannot receive SMS" or an amber "at risk" with what to
 * do, and when the app last saw an SMS. Nothing for a healthy phone or one
 * whose app reports nothing.
 */
type AdminDevice = z.output<typeof adminDeviceSchema>;

export function PhoneHealth({ device }: { device: Pick<AdminDevice, 'name' | 'diagnostics'> }) {
  const d = device.diagnostics;
  const seen = d.last_sms_seen_at ? <span className="block text-xs text-slate-600">last SMS seen by the app {ago(d.last_sms_seen_at)}</span> : null;
  if (d.health !== 'cannot_receive' && d.health !== 'at_risk') return seen;
  return (
    <span className="mt-1 block" role="note" aria-label={`${device.name}: ${d.health === 'cannot_receive' ? 'cannot receive SMS' : 'forwarding at risk'}`}>
      <Badge tone={d.health === 'cannot_receive' ? 'red' : 'amber'}>{d.health === 'cannot_receive' ? 'cannot receive SMS' : 'forwarding at risk'}</Badge>
      {d.problems.map((p) => (
        <span key={p} className="block text-xs text-slate-700">
          {p}
        </span>
      ))}
      {seen}
    </span>
  );
}
