import { useEffect, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import { MAX_BACKFILL_WINDOW_DAYS, type backfillRequestSchema } from '../../../contract/admin/recovery.ts';
import { api, ok } from '../api.ts';
import { Button, Card, Empty, ErrorBox, Field, Input, Loading, StatusBadge, time } from './ui.tsx';
import { FieldError, invalidProps, isoFromLocalInput, localInputValue, unplaced } from './field-error.tsx';

type Backfill = z.output<typeof backfillRequestSchema>;
const FIELDS = ['from', 'to', 'device_id'] as const;
const REASONS: Record<Backfill['reason'], string> = {
  manual: 'asked by an operator',
  offline: 'asked by the service: the phone was offline',
  heartbeat_gap: "asked by the service: the phone's heartbeats stopped",
  balance_chain_break: 'asked by the service: a balance did not follow the previous one',
  payment_submitted: "asked by the service: a customer submitted a transaction ID no SMS proves yet (the gateway's senders only)",
  sequence_gap: "asked by the service: numbers missing from the phone's SMS sequence",
};

/** An audit actor as a person reads it: a console operator's `operator:<id> <e-mail>` is the e-mail. */
const actorName = (actor: string) => /^operator:\S+ (.+)$/.exec(actor)?.[1] ?? actor;

/** Where a request stands, in words. */
export function backfillProgress(r: Backfill): string {
  switch (r.status) {
    case 'pending':
      return r.attempts === 0 ? 'Waiting for the phone to fetch it.' : `Waiting for the phone to fetch it; nudged ${r.attempts} time${r.attempts === 1 ? '' : 's'}, next at ${time(r.next_attempt_at)}.`;
    case 'delivered':
      return `The phone fetched it at ${time(r.delivered_at)}; waiting for it to re-send the SMS.`;
    case 'answered':
      return `Answered at ${time(r.answered_at)}: the phone re-sent ${r.resent_count ?? 0} SMS${r.resent_count === 0 ? ' (it had none from the official senders in the window)' : ''}.`;
    case 'failed':
      return `Failed at ${time(r.failed_at)}: the phone never answered after ${r.attempts} nudges. Check that it is on and the app is running, then ask again.`;
  }
}

/**
 * Asking one phone to re-send the SMS of a window of its inbox, and the
 * requests to it so far with where each stands (refreshed while one is open).
 */
export function BackfillPanel({ device, onClose }: { device: { id: number; name: string }; onClose(): void }) {
  const queryClient = useQueryClient();
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    panel.current?.focus();
    panel.current?.scrollIntoView({ block: 'nearest' });
  }, []);
  const now = new Date();
  const [from, setFrom] = useState(localInputValue(new Date(now.getTime() - 24 * 3_600_000)));
  const [to, setTo] = useState(localInputValue(now));
  const list = useQuery({
    queryKey: ['backfill-requests', device.id],
    queryFn: async () => (await ok(api.recovery.listBackfillRequests({ query: { device_id: String(device.id) } }))).data,
    // Quick while a request is open, so its progress shows as the phone answers.
    refetchInterval: (q) => ((q.state.data ?? []).some((r) => r.status === 'pending' || r.status === 'delivered') ? 2_000 : 30_000),
  });
  const ask = useMutation({
    mutationFn: async () => (await ok(api.recovery.requestBackfill({ params: { device_id: String(device.id) }, body: { from: isoFromLocalInput(from), to: isoFromLocalInput(to) } }))).data,
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['backfill-requests', device.id] });
    },
  });
  const err = ask.error;
  const title = `Re-send SMS from ${device.name}`;
  return (
    <div ref={panel} tabIndex={-1} role="region" aria-label={title} className="mt-4 outline-none">
      <Card title={title} actions={<Button onClick={onClose}>Close</Button>}>
        <p className="mb-3 text-sm text-slate-700">
          The phone re-forwards the SMS from official senders it received in the window (at most {MAX_BACKFILL_WINDOW_DAYS} days); SMS already stored are not counted twice.
        </p>
        <form
          className="grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-start"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            ask.mutate();
          }}
        >
          <Field label="From" htmlFor="backfill-from">
            <Input id="backfill-from" type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} {...invalidProps(err, 'from', 'backfill-from')} />
            <FieldError error={err} field="from" id="backfill-from" />
          </Field>
          <Field label="To" htmlFor="backfill-to">
            <Input id="backfill-to" type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} {...invalidProps(err, 'to', 'backfill-to')} />
            <FieldError error={err} field="to" id="backfill-to" />
          </Field>
          <div className="sm:pt-6">
            <Button type="submit" variant="primary" busy={ask.isPending}>
              Ask the phone
            </Button>
          </div>
          <div className="sm:col-span-3">
            <FieldError error={err} field="device_id" id="backfill-device" />
            <ErrorBox error={unplaced(err, FIELDS)} />
          </div>
        </form>
        <h3 className="mt-4 mb-2 text-sm font-semibold text-slate-900">Requests to this phone</h3>
        <ErrorBox error={list.error} />
        {list.isPending ? (
          <Loading />
        ) : list.data?.length === 0 ? (
          <Empty>None yet.</Empty>
        ) : (
          <ul className="divide-y divide-slate-100 text-sm" aria-label="Backfill requests" aria-live="polite">
            {(list.data ?? []).map((r) => (
              <li key={r.id} className="py-2">
                <div className="flex flex-wrap items-center gap-2">
                  <StatusBadge status={r.status} />
                  <span className="font-medium">
                    {time(r.from)} to {time(r.to)}
                  </span>
                </div>
                <p className="mt-1 text-slate-700">{backfillProgress(r)}</p>
                <p className="text-xs text-slate-600">
                  Request #{r.id}, {REASONS[r.reason]}
                  {r.sequences ? ` (${r.sequences.sim_slot === null ? 'no SIM slot' : `SIM ${r.sequences.sim_slot + 1}`}: #${r.sequences.numbers.join(', #')})` : ''}
                  {r.requested_by ? ` (${actorName(r.requested_by)})` : ''}, {time(r.created_at)}.
                </p>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
