import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import type { Mode } from '../mode.tsx';
import { Badge } from './ui.tsx';

/** Each active phone's SMS completeness over the last 24 hours, by device id (GET /phones/sms-completeness). */
export function useSmsCompleteness(mode: Mode) {
  return useQuery({
    queryKey: ['sms-completeness', mode],
    refetchInterval: 30_000,
    queryFn: async () => new Map((await ok(api.smsCompleteness.list({ query: { mode } }))).data.map((v) => [v.device_id, v])),
  });
}

type View = { verdict: 'complete' | 'missing' | 'unknown'; missing_count: number; screened_count: number; highest: number | null; counters: Array<{ sim_slot: number | null; missing: number[]; missing_count: number }> };

/**
 * Whether a phone missed an SMS in the last 24 hours, from its sequence numbers
 * (docs/recovery.md "Sequence numbers"): complete, N missing (which, per SIM),
 * or unknown when its app sends no numbers.
 */
export function SmsCompleteness({ view }: { view: View | undefined }) {
  if (!view) return <span className="text-xs text-slate-600">–</span>;
  if (view.verdict === 'unknown') {
    return (
      <span data-testid="sms-completeness" title="The app sends no sequence numbers: a missed SMS cannot be seen.">
        <Badge>SMS: unknown</Badge>
      </span>
    );
  }
  if (view.verdict === 'complete') {
    return (
      <span data-testid="sms-completeness" title={`Every SMS numbered in the last 24 hours arrived or was screened out (${view.screened_count} screened).`}>
        <Badge tone="green">SMS: none missing</Badge>
      </span>
    );
  }
  const which = view.counters
    .filter((c) => c.missing_count > 0)
    .map((c) => `${c.sim_slot === null ? 'no SIM slot' : `SIM ${c.sim_slot + 1}`}: #${c.missing.join(', #')}${c.missing_count > c.missing.length ? '…' : ''}`)
    .join('; ');
  return (
    <span data-testid="sms-completeness" className="inline-flex flex-wrap items-center gap-1">
      <Badge tone="red">{`SMS: ${view.missing_count} missing`}</Badge>
      <span className="text-xs text-slate-600">{which} (asked from the phone)</span>
    </span>
  );
}
