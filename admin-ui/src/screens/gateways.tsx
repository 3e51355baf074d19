import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { adminGatewaySchema } from '../../../contract/admin/gateways.ts';
import { ApiError, api, ok } from '../api.ts';
import { useSession } from '../session.tsx';
import { TemplateTryOut } from '../components/template-tryout.tsx';
import { Badge, Button, Card, Empty, ErrorBox, Field, Input, Loading, Notice, PageTitle, Select, TextArea, cx } from '../components/ui.tsx';

type Gateway = z.output<typeof adminGatewaySchema>;
type Template = Gateway['sms_templates'][number];

export function GatewaysScreen() {
  const list = useQuery({ queryKey: ['gateways'], queryFn: async () => (await ok(api.gateways.list())).data });
  const [code, setCode] = useState<string | null>(null);
  const current = list.data?.find((g) => g.code === code) ?? list.data?.[0] ?? null;
  return (
    <div>
      <PageTitle>Gateways and SMS templates</PageTitle>
      <ErrorBox error={list.error} />
      {list.isPending ? <Loading /> : null}
      {list.data?.length === 0 ? (
        <Card>
          <Empty>No gateway.</Empty>
        </Card>
      ) : null}
      {list.data && current ? (
        <div className="grid gap-4 lg:grid-cols-[14rem_1fr]">
          <ul className="flex flex-col gap-1 rounded-lg bg-white p-1 shadow-sm ring-1 ring-slate-200" aria-label="Gateways">
            {list.data.map((g) => (
              <li key={g.code}>
                <button
                  type="button"
                  aria-current={g.code === current.code ? 'true' : undefined}
                  onClick={() => setCode(g.code)}
                  className={cx('flex w-full items-center justify-between gap-2 rounded-md px-3 py-2 text-left text-sm', g.code === current.code ? 'bg-indigo-50 ring-2 ring-indigo-600' : 'hover:bg-slate-50')}
                >
                  <span>
                    <span className="font-medium">{g.name}</span> <span className="text-xs text-slate-600">{g.code}</span>
                  </span>
                  {g.enabled ? <Badge tone="green">on</Badge> : <Badge>off</Badge>}
                </button>
              </li>
            ))}
          </ul>
          <GatewayEditor key={`${current.code}-${current.updated_at}`} gateway={current} />
        </div>
      ) : null}
    </div>
  );
}

function GatewayEditor({ gateway }: { gateway: Gateway }) {
  const { can } = useSession();
  const owner = can('own');
  const queryClient = useQueryClient();
  const [form, setForm] = useState({
    name: gateway.name,
    enabled: gateway.enabled,
    receiving_account: gateway.receiving_account ?? '',
    instructions: gateway.instructions ?? '',
    min_amount: gateway.min_amount,
    max_amount: gateway.max_amount ?? '',
    review_above: gateway.review_above ?? '',
    fee_percent: gateway.fee_percent,
    fee_fixed: gateway.fee_fixed,
    sms_senders: gateway.sms_senders.join(', '),
    sms_templates: JSON.stringify(gateway.sms_templates, null, 2),
  });
  const [notice, setNotice] = useState<string | null>(null);
  const [regression, setRegression] = useState<string | null>(null);
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));

  function templates(): Template[] {
    const parsed: unknown = JSON.parse(form.sms_templates);
    if (!Array.isArray(parsed)) throw new Error('Templates must be a JSON array');
    return parsed as Template[];
  }
  const body = () => ({
    name: form.name.trim(),
    enabled: form.enabled,
    receiving_account: form.receiving_account.trim() || null,
    instructions: form.instructions.trim() || null,
    min_amount: form.min_amount,
    max_amount: form.max_amount.trim() || null,
    review_above: form.review_above.trim() || null,
    fee_percent: form.fee_percent,
    fee_fixed: form.fee_fixed,
    sms_senders: form.sms_senders.split(',').map((s) => s.trim()).filter(Boolean),
    sms_templates: templates().map((t) => ({ pattern: t.pattern, ...(t.flags ? { flags: t.flags } : {}), ...(t.direction ? { direction: t.direction } : {}), ...(t.kind ? { kind: t.kind } : {}) })),
  });
  const save = useMutation({
    mutationFn: async (confirm: boolean) => (await ok(api.gateways.update({ params: { code: gateway.code }, body: { ...body(), ...(confirm ? { confirm_regressions: true } : {}) } }))).data,
    onSuccess: async (g) => {
      setRegression(null);
      setNotice(`${g.name} saved.`);
      await queryClient.invalidateQueries({ queryKey: ['gateways'] });
    },
    onError: (err) => setRegression(err instanceof ApiError && err.code === 'TEMPLATE_REGRESSION' ? err.message : null),
  });
  const evaluate = useMutation({
    mutationFn: async () => {
      const b = body();
      return (await ok(api.gateways.evaluateTemplates({ params: { code: gateway.code }, body: { sms_templates: b.sms_templates, sms_senders: b.sms_senders } }))).data;
    },
  });
  const ev = evaluate.data;

  return (
    <div className="flex min-w-0 flex-col gap-4">
      <Card title={`${gateway.name} (${gateway.code}, ${gateway.type})`}>
        {notice ? <Notice>{notice}</Notice> : null}
        <form
          className="grid gap-3 sm:grid-cols-2"
          onSubmit={(e) => {
            e.preventDefault();
            setNotice(null);
            save.mutate(false);
          }}
        >
          <Field label="Name (shown to customers)" htmlFor="gw-name">
            <Input id="gw-name" value={form.name} onChange={set('name')} readOnly={!owner} />
          </Field>
          <Field label="Offered at checkout" htmlFor="gw-enabled">
            <Select id="gw-enabled" value={form.enabled ? 'yes' : 'no'} onChange={(e) => setForm((f) => ({ ...f, enabled: e.target.value === 'yes' }))} disabled={!owner}>
              <option value="yes">enabled</option>
              <option value="no">disabled</option>
            </Select>
          </Field>
          <Field label="Receiving account" htmlFor="gw-account">
            <Input id="gw-account" value={form.receiving_account} onChange={set('receiving_account')} readOnly={!owner} />
          </Field>
          <Field label="Review every amount above" htmlFor="gw-review" hint="Empty: no such limit.">
            <Input id="gw-review" inputMode="decimal" value={form.review_above} onChange={set('review_above')} readOnly={!owner} />
          </Field>
          <Field label="Minimum amount" htmlFor="gw-min">
            <Input id="gw-min" inputMode="decimal" value={form.min_amount} onChange={set('min_amount')} readOnly={!owner} />
          </Field>
          <Field label="Maximum amount" htmlFor="gw-max" hint="Empty: no maximum.">
            <Input id="gw-max" inputMode="decimal" value={form.max_amount} onChange={set('max_amount')} readOnly={!owner} />
          </Field>
          <Field label="Fee percent" htmlFor="gw-fee-pct">
            <Input id="gw-fee-pct" inputMode="decimal" value={form.fee_percent} onChange={set('fee_percent')} readOnly={!owner} />
          </Field>
          <Field label="Fixed fee" htmlFor="gw-fee-fixed">
            <Input id="gw-fee-fixed" inputMode="decimal" value={form.fee_fixed} onChange={set('fee_fixed')} readOnly={!owner} />
          </Field>
          <div className="sm:col-span-2">
            <Field label="Checkout instructions" htmlFor="gw-instr">
              <TextArea id="gw-instr" rows={2} value={form.instructions} onChange={set('instructions')} readOnly={!owner} />
            </Field>
          </div>
          <div className="sm:col-span-2">
            <Field label="Official SMS senders" htmlFor="gw-senders" hint="Comma-separated; SMS from anyone else never verify a payment.">
              <Input id="gw-senders" value={form.sms_senders} onChange={set('sms_senders')} readOnly={!owner} />
            </Field>
          </div>
          <div className="sm:col-span-2">
            <Field label="SMS templates (JSON: pattern with named groups amount, trx_id...; flags; direction; kind)" htmlFor="gw-templates">
              <TextArea id="gw-templates" rows={8} className="font-mono text-xs" value={form.sms_templates} onChange={set('sms_templates')} readOnly={!owner} spellCheck={false} />
            </Field>
          </div>
          <ErrorBox error={save.error ?? evaluate.error} />
          {owner ? (
            <div className="flex flex-wrap gap-2 sm:col-span-2">
              <Button onClick={() => evaluate.mutate()} busy={evaluate.isPending}>
                Check against stored SMS
              </Button>
              <Button type="submit" variant="primary" busy={save.isPending}>
                Save gateway
              </Button>
              {regression ? (
                <Button variant="danger" onClick={() => save.mutate(true)} busy={save.isPending}>
                  Save anyway
                </Button>
              ) : null}
            </div>
          ) : (
            <p className="text-sm text-slate-600 sm:col-span-2">Only an owner can change gateways.</p>
          )}
        </form>
        {ev ? (
          <div className="mt-4 rounded-md bg-slate-50 p-3 text-sm" role="status">
            <p className="font-medium">
              Last {ev.days} days, {ev.counts.evaluated} SMS from the official senders: {ev.counts.unchanged} read the same, {ev.counts.newly_parsed} newly read, {ev.counts.changed} read differently,{' '}
              <span className={ev.counts.stops_parsing ? 'text-red-800' : ''}>{ev.counts.stops_parsing} no longer read</span>.
            </p>
            <p className="mt-1 text-slate-700">
              Open payments it would complete: {ev.payments.would_complete.length}; would stop completing: {ev.payments.would_stop_completing.length}.
            </p>
          </div>
        ) : null}
      </Card>
      {owner ? (
        <TemplateTryOut
          gateway={gateway}
          proposal={() => {
            const b = body();
            return { sms_templates: b.sms_templates, sms_senders: b.sms_senders };
          }}
        />
      ) : null}
    </div>
  );
}
