import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useSession } from '../session.tsx';
import { Button, Card, ErrorBox, Field, Input, Loading, Notice, PageTitle } from '../components/ui.tsx';

const FIELDS = [
  ['intent_expiry_minutes', 'Payment lifetime (minutes)', 'When the merchant gives none.'],
  ['match_window_minutes', 'Match window (minutes)', 'How long before an SMS a payment may have been created.'],
  ['match_clock_grace_seconds', 'Clock grace (seconds)', 'How much older than its payment an SMS may look.'],
  ['device_offline_minutes', 'Phone offline after (minutes)', ''],
  ['battery_low_percent', 'Battery alert below (%)', ''],
  ['review_waiting_minutes', 'Review alert after (minutes)', 'A payment waiting longer raises an alert.'],
  ['sms_alarm_window_minutes', 'Format alarm window (minutes)', ''],
  ['sms_alarm_min_messages', 'Format alarm minimum SMS', ''],
  ['sms_alarm_rise', 'Format alarm rise (0.05 to 1)', ''],
] as const;
type Key = (typeof FIELDS)[number][0];

export function SettingsScreen() {
  const { can } = useSession();
  const queryClient = useQueryClient();
  const [notice, setNotice] = useState<string | null>(null);
  const settings = useQuery({ queryKey: ['settings'], queryFn: async () => (await ok(api.settings.get())).data });
  const save = useMutation({
    mutationFn: async (body: Partial<Record<Key, number>>) => (await ok(api.settings.update({ body }))).data,
    onSuccess: async () => {
      setNotice('Settings saved; every process uses them from now on.');
      await queryClient.invalidateQueries({ queryKey: ['settings'] });
    },
  });
  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const body: Partial<Record<Key, number>> = {};
    for (const [key] of FIELDS) {
      const v = Number(data.get(key));
      if (settings.data && v !== settings.data[key]) body[key] = v;
    }
    if (Object.keys(body).length === 0) setNotice('Nothing changed.');
    else save.mutate(body);
  }
  const owner = can('own');
  return (
    <div>
      <PageTitle>Settings</PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={settings.error ?? save.error} />
      {settings.isPending ? <Loading /> : null}
      {settings.data ? (
        <Card>
          <form onSubmit={submit} className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3" key={JSON.stringify(settings.data)}>
            {FIELDS.map(([key, label, hint]) => (
              <Field key={key} label={label} htmlFor={key} hint={hint || undefined}>
                <Input id={key} name={key} type="number" step={key === 'sms_alarm_rise' ? '0.01' : '1'} defaultValue={settings.data[key]} readOnly={!owner} />
              </Field>
            ))}
            {owner ? (
              <div className="sm:col-span-2 lg:col-span-3">
                <Button type="submit" variant="primary" busy={save.isPending}>
                  Save settings
                </Button>
              </div>
            ) : (
              <p className="text-sm text-slate-600 sm:col-span-2 lg:col-span-3">Only an owner can change settings.</p>
            )}
          </form>
        </Card>
      ) : null}
    </div>
  );
}
