import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { pastedSmsRecordSchema } from '../../../contract/admin/recovery.ts';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { Link } from '../router.tsx';
import { Button, Card, ErrorBox, Field, Input, Notice, Select, TextArea, money } from './ui.tsx';
import { FieldError, invalidProps, isoFromLocalInput, localInputValue, unplaced } from './field-error.tsx';

type Pasted = z.output<typeof pastedSmsRecordSchema>;
const FIELDS = ['device_id', 'sender', 'body', 'received_at'] as const;

/**
 * What became of a pasted SMS, in words: the payment it completed, why it
 * went to review, whose duplicate it is, or why it was not read.
 */
export function PastedOutcome({ r }: { r: Pasted }) {
  const why = r.reason ? ` ${r.reason}` : '';
  const payment = r.transaction_id ? (
    <Link to={`/payments/${r.transaction_id}`} className="font-medium text-indigo-800 underline">
      payment #{r.transaction_id}
      {r.trx_id ? ` (${r.trx_id})` : ''}
    </Link>
  ) : null;
  switch (r.match_status) {
    case 'matched':
      return (
        <Notice>
          Stored as SMS #{r.id} and matched: {payment ?? 'its payment'} is completed ({money(r.parsed_amount)}, trx id {r.parsed_trx_id ?? '–'}).{why}
        </Notice>
      );
    case 'duplicate':
      return (
        <Notice tone="amber">
          Already received: this text is a duplicate of SMS #{r.duplicate_of}, so it was stored as SMS #{r.id} and not matched a second time.
        </Notice>
      );
    case 'low_confidence':
    case 'no_candidate':
    case 'balance_mismatch':
      return (
        <Notice tone="amber">
          Stored as SMS #{r.id} and sent to review ({r.match_status.replace(/_/g, ' ')}): it proves no payment by itself.{why}{' '}
          <Link to="/review" className="underline">
            Open the review queue
          </Link>
        </Notice>
      );
    case 'money_out':
      return <Notice tone="amber">Stored as SMS #{r.id}: it reports money going out of the wallet, which never pays a payment; it only keeps the balance chain.{why}</Notice>;
    case 'no_match':
      return <Notice tone="amber">Stored as SMS #{r.id} but not read as a payment.{why || ' No template reads its amount and transaction id.'}</Notice>;
    default:
      return <Notice tone="amber">Stored as SMS #{r.id}; matching has not finished yet ({r.match_status}).</Notice>;
  }
}

/**
 * The form for an SMS the phone never forwarded: it goes through exactly the
 * parsing, duplicate and matching rules of a forwarded one (POST /sms-records).
 */
export function PasteSmsForm({ deviceId, onClose }: { deviceId?: string; onClose(): void }) {
  const { mode } = useMode();
  const queryClient = useQueryClient();
  // Opened on purpose: the keyboard lands on the form's first field.
  useEffect(() => document.getElementById('paste-device')?.focus(), []);
  const devices = useQuery({
    queryKey: ['devices', mode, 'all'],
    queryFn: async () => (await ok(api.devices.list({ query: { mode, per_page: '100' } }))).data,
  });
  const gateways = useQuery({ queryKey: ['gateways'], queryFn: async () => (await ok(api.gateways.list())).data });
  const senders = [...new Set((gateways.data ?? []).filter((g) => g.enabled).flatMap((g) => g.sms_senders))];
  const active = (devices.data ?? []).filter((d) => d.status === 'active');
  const [form, setForm] = useState({ device: deviceId ?? '', sender: '', body: '', received: localInputValue(new Date()) });
  const device = form.device || String(active[0]?.id ?? '');
  const sender = form.sender || senders[0] || '';
  const paste = useMutation({
    mutationFn: async () =>
      (await ok(api.recovery.pasteSms({ body: { device_id: Number(device), sender, body: form.body, received_at: isoFromLocalInput(form.received) } }))).data,
    onSuccess: async () => {
      setForm((f) => ({ ...f, body: '' }));
      await queryClient.invalidateQueries({ queryKey: ['sms'] });
    },
  });
  const err = paste.error;
  return (
    <div role="region" aria-label="Paste a missed SMS" className="mb-4">
      <Card title="Paste a missed SMS" actions={<Button onClick={onClose}>Close</Button>}>
        <p className="mb-3 text-sm text-slate-700">
          For an SMS the phone received but never forwarded. It is checked exactly like a forwarded one: it can complete the payment it proves; the same SMS forwarded later is a duplicate. Recorded in the
          audit log under your name.{' '}
          {device ? (
            <Link to={`/devices?backfill=${device}`} className="text-indigo-800 underline">
              Or ask the phone to re-send its SMS
            </Link>
          ) : null}
        </p>
        {paste.data ? <PastedOutcome r={paste.data} /> : null}
        <form
          className="grid gap-3 sm:grid-cols-2"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            paste.mutate();
          }}
        >
          <Field label="Phone that received it" htmlFor="paste-device">
            <Select id="paste-device" value={device} onChange={(e) => setForm((f) => ({ ...f, device: e.target.value }))} {...invalidProps(err, 'device_id', 'paste-device')}>
              {active.length === 0 ? <option value="">No active {mode} phone</option> : null}
              {active.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name} (#{d.id})
                </option>
              ))}
            </Select>
            <FieldError error={err} field="device_id" id="paste-device" />
          </Field>
          <Field label="Sender (as the phone shows it)" htmlFor="paste-sender">
            <Input id="paste-sender" list="paste-senders" autoComplete="off" value={sender} onChange={(e) => setForm((f) => ({ ...f, sender: e.target.value }))} {...invalidProps(err, 'sender', 'paste-sender')} />
            <datalist id="paste-senders">
              {senders.map((s) => (
                <option key={s} value={s} />
              ))}
            </datalist>
            <FieldError error={err} field="sender" id="paste-sender" />
          </Field>
          <div className="sm:col-span-2">
            <Field label="SMS text" htmlFor="paste-body">
              <TextArea id="paste-body" rows={4} aria-required="true" value={form.body} onChange={(e) => setForm((f) => ({ ...f, body: e.target.value }))} {...invalidProps(err, 'body', 'paste-body')} />
              <FieldError error={err} field="body" id="paste-body" />
            </Field>
          </div>
          <Field label="Received at (time on the phone)" htmlFor="paste-received">
            <Input id="paste-received" type="datetime-local" value={form.received} onChange={(e) => setForm((f) => ({ ...f, received: e.target.value }))} {...invalidProps(err, 'received_at', 'paste-received')} />
            <FieldError error={err} field="received_at" id="paste-received" />
          </Field>
          <div className="sm:col-span-2">
            <ErrorBox error={unplaced(err, FIELDS) ?? devices.error} />
            <Button type="submit" variant="primary" busy={paste.isPending}>
              Store and match the SMS
            </Button>
          </div>
        </form>
      </Card>
    </div>
  );
}
