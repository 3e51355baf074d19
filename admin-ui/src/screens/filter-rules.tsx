import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useSession } from '../session.tsx';
import { useBrands } from '../queries.ts';
import { Button, Card, ErrorBox, Field, Input, Loading, Notice, PageTitle, Select, TextArea } from '../components/ui.tsx';

const lines = (s: string) => s.split('\n').map((x) => x.trim()).filter(Boolean);

/** A brand's SMS filter rules: what its phones forward and what never leaves them. */
export function FilterRulesScreen() {
  const brands = useBrands();
  const [brandId, setBrandId] = useState<string>('');
  const current = brandId || String(brands.data?.[0]?.id ?? '');
  const rules = useQuery({
    queryKey: ['filter-rules', current],
    enabled: !!current,
    queryFn: async () => (await ok(api.filterRules.get({ params: { brand_id: current } }))).data,
  });
  return (
    <div>
      <PageTitle
        actions={
          <Select aria-label="Brand" value={current} onChange={(e) => setBrandId(e.target.value)} className="w-48">
            {(brands.data ?? []).map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </Select>
        }
      >
        SMS filter rules
      </PageTitle>
      <ErrorBox error={brands.error ?? rules.error} />
      {rules.isPending && current ? <Loading /> : null}
      {rules.data ? <RulesForm key={`${current}-${rules.data.version}`} brandId={current} rules={rules.data} /> : null}
    </div>
  );
}

function RulesForm({ brandId, rules }: { brandId: string; rules: { version: number; allowed_senders: string[]; extra_senders: string[]; positive_keywords: string[]; negative_keywords: string[]; check_interval_hours: number } }) {
  const { can } = useSession();
  const owner = can('own');
  const queryClient = useQueryClient();
  const [form, setForm] = useState({
    extra: rules.extra_senders.join('\n'),
    positive: rules.positive_keywords.join('\n'),
    negative: rules.negative_keywords.join('\n'),
    hours: String(rules.check_interval_hours),
  });
  const [notice, setNotice] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async () =>
      (
        await ok(
          api.filterRules.update({
            params: { brand_id: brandId },
            body: { extra_senders: lines(form.extra), positive_keywords: lines(form.positive), negative_keywords: lines(form.negative), check_interval_hours: Number(form.hours) },
          }),
        )
      ).data,
    onSuccess: async (r) => {
      setNotice(`Saved as version ${r.version}; phones fetch it at their next check.`);
      await queryClient.invalidateQueries({ queryKey: ['filter-rules'] });
    },
  });
  return (
    <Card title={`Version ${rules.version}`}>
      {notice ? <Notice>{notice}</Notice> : null}
      <p className="mb-3 text-sm text-slate-700">
        Allowed senders now: <span className="font-mono">{rules.allowed_senders.join(', ') || 'none'}</span> (the enabled gateways&apos; official senders plus the extra ones).
      </p>
      <form
        className="grid gap-3 md:grid-cols-3"
        onSubmit={(e) => {
          e.preventDefault();
          save.mutate();
        }}
      >
        <Field label="Extra senders" htmlFor="fr-extra" hint="One per line.">
          <TextArea id="fr-extra" rows={5} value={form.extra} onChange={(e) => setForm({ ...form, extra: e.target.value })} readOnly={!owner} />
        </Field>
        <Field label="Must contain one of" htmlFor="fr-pos" hint="One per line; empty: no requirement.">
          <TextArea id="fr-pos" rows={5} value={form.positive} onChange={(e) => setForm({ ...form, positive: e.target.value })} readOnly={!owner} />
        </Field>
        <Field label="Never forward if it contains" htmlFor="fr-neg" hint="One per line (OTP, PIN...).">
          <TextArea id="fr-neg" rows={5} value={form.negative} onChange={(e) => setForm({ ...form, negative: e.target.value })} readOnly={!owner} />
        </Field>
        <Field label="Phones re-check every (hours)" htmlFor="fr-hours">
          <Input id="fr-hours" type="number" min={1} max={168} value={form.hours} onChange={(e) => setForm({ ...form, hours: e.target.value })} readOnly={!owner} />
        </Field>
        <div className="md:col-span-3">
          <ErrorBox error={save.error} />
          {owner ? (
            <Button type="submit" variant="primary" busy={save.isPending}>
              Save rules
            </Button>
          ) : (
            <p className="text-sm text-slate-600">Only an owner can change filter rules.</p>
          )}
        </div>
      </form>
    </Card>
  );
}
