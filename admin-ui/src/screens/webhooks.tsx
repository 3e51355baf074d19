import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrandName } from '../queries.ts';
import { Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, Notice, PageTitle, Select, StatusBadge, Table, Td, time, count } from '../components/ui.tsx';

const STATUSES = ['pending', 'retrying', 'success', 'dead_letter'] as const;

export function WebhooksScreen() {
  const { mode } = useMode();
  const { can } = useSession();
  const queryClient = useQueryClient();
  const brandName = useBrandName();
  const [status, setStatus] = useState<'' | (typeof STATUSES)[number]>('');
  const [notice, setNotice] = useState<string | null>(null);
  const [bulkOpen, setBulkOpen] = useState(false);
  const [since, setSince] = useState(() => new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 16));

  const list = useQuery({
    queryKey: ['deliveries', mode, status],
    refetchInterval: 10_000,
    queryFn: () => ok(api.webhookDeliveries.list({ query: { mode, per_page: '100', ...(status ? { status } : {}) } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['deliveries'] });
  const replay = useMutation({
    mutationFn: async (id: number) => (await ok(api.webhookDeliveries.replay({ params: { delivery_id: String(id) }, body: {} }))).data,
    onSuccess: async (d) => {
      setNotice(`Delivery #${d.id} (${d.event}) is queued again.`);
      await refresh();
    },
  });
  const replayAll = useMutation({
    mutationFn: async () => (await ok(api.webhookDeliveries.replayDeadLetters({ body: { since: new Date(since).toISOString() } }))).data,
    onSuccess: async (r) => {
      setBulkOpen(false);
      setNotice(`${r.replayed} dead letters queued again${r.skipped_disabled ? `; ${r.skipped_disabled} left alone because their endpoint is disabled` : ''}.`);
      await refresh();
    },
  });

  return (
    <div>
      <PageTitle
        actions={
          can('operate') ? (
            <Button onClick={() => setBulkOpen(true)} variant="primary">
              Replay dead letters…
            </Button>
          ) : null
        }
      >
        Webhook deliveries
      </PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={list.error ?? replay.error} />
      <Card
        title={list.data ? count(list.data.meta.total, 'delivery', 'deliveries') : 'Deliveries'}
        actions={
          <Select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value as typeof status)} className="w-40">
            <option value="">any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </Select>
        }
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No delivery.</Empty>
        ) : (
          <Table label="Webhook deliveries" head={['Event', 'Status', 'Attempts', 'Last result', 'Brand', 'Created', '']}>
            {(list.data?.data ?? []).map((d) => (
              <tr key={d.id}>
                <Td>
                  <span className="font-medium">{d.event}</span>
                  <span className="block max-w-64 truncate text-xs text-slate-600" title={d.url}>
                    #{d.id} · {d.url}
                  </span>
                </Td>
                <Td>
                  <StatusBadge status={d.status} />
                </Td>
                <Td>{d.attempts}</Td>
                <Td className="max-w-56 text-xs break-words">{d.response_status ? `HTTP ${d.response_status}` : (d.last_error ?? '–')}</Td>
                <Td>{brandName(d.brand_id)}</Td>
                <Td className="whitespace-nowrap">{time(d.created_at)}</Td>
                <Td>
                  {can('operate') && d.status === 'dead_letter' ? (
                    <Button busy={replay.isPending && replay.variables === d.id} onClick={() => replay.mutate(d.id)}>
                      Replay
                    </Button>
                  ) : null}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Dialog open={bulkOpen} title="Replay every dead letter" onClose={() => setBulkOpen(false)}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            replayAll.mutate();
          }}
        >
          <Field label="Dead-lettered since" htmlFor="since" hint="Your local time. Up to 1000 per run.">
            <Input id="since" type="datetime-local" required value={since} onChange={(e) => setSince(e.target.value)} />
          </Field>
          <ErrorBox error={replayAll.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setBulkOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={replayAll.isPending}>
              Replay dead letters
            </Button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
