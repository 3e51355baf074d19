import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RefundStatus } from '../../../contract/vocabulary.ts';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrandName } from '../queries.ts';
import { Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, Notice, PageTitle, Select, StatusBadge, Table, Td, TextArea, money, time, count } from '../components/ui.tsx';

export function RefundsScreen() {
  const { mode } = useMode();
  const { can } = useSession();
  const queryClient = useQueryClient();
  const brandName = useBrandName();
  const [status, setStatus] = useState<'' | RefundStatus>('pending');
  const [failing, setFailing] = useState<number | null>(null);
  const [completing, setCompleting] = useState<{ id: number; manual: boolean; label: string } | null>(null);
  const [payout, setPayout] = useState({ reference: '', note: '' });
  const [reason, setReason] = useState('');
  const [notice, setNotice] = useState<string | null>(null);

  const list = useQuery({
    queryKey: ['refunds', mode, status],
    refetchInterval: 10_000,
    queryFn: () => ok(api.refunds.list({ query: { mode, per_page: '100', ...(status ? { status } : {}) } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['refunds'] });
  const complete = useMutation({
    mutationFn: async (v: { id: number; reference: string; note: string }) =>
      (await ok(api.refunds.complete({ params: { refund_id: String(v.id) }, body: { ...(v.reference ? { reference: v.reference } : {}), ...(v.note ? { note: v.note } : {}) } }))).data,
    onSuccess: async (r) => {
      setCompleting(null);
      setNotice(`Refund #${r.id} of ${money(r.amount, r.currency)} is completed${r.completion_reference ? ` (wallet reference ${r.completion_reference})` : ''}.`);
      await refresh();
    },
  });
  const fail = useMutation({
    mutationFn: async (v: { id: number; reason: string }) => (await ok(api.refunds.fail({ params: { refund_id: String(v.id) }, body: { reason: v.reason } }))).data,
    onSuccess: async (r) => {
      setFailing(null);
      setNotice(`Refund #${r.id} is marked failed.`);
      await refresh();
    },
  });

  return (
    <div>
      <PageTitle>Refunds</PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={list.error} />
      <Card
        title={list.data ? count(list.data.meta.total, 'refund') : 'Refunds'}
        actions={
          <Select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value as typeof status)} className="w-36">
            <option value="">any status</option>
            <option value="pending">pending</option>
            <option value="completed">completed</option>
            <option value="failed">failed</option>
          </Select>
        }
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No refund.</Empty>
        ) : (
          <Table label="Refunds" head={['Refund', 'Amount', 'Status', 'Payment', 'Brand', 'Requested', '']}>
            {(list.data?.data ?? []).map((r) => (
              <tr key={r.id}>
                <Td>
                  #{r.id}
                  <span className="block text-xs text-slate-600">{r.reason ?? ''}</span>
                </Td>
                <Td className="whitespace-nowrap">{money(r.amount, r.currency)}</Td>
                <Td>
                  <StatusBadge status={r.status} />
                  {r.failure_reason ? <span className="block text-xs text-slate-600">{r.failure_reason}</span> : null}
                  {r.completion_reference ? (
                    <span className="block text-xs text-slate-600">
                      Sent back as <span className="font-mono">{r.completion_reference}</span>
                    </span>
                  ) : null}
                  {r.completion_note ? <span className="block max-w-64 text-xs break-words text-slate-600">Note: {r.completion_note}</span> : null}
                  {r.processed_at ? <span className="block text-xs whitespace-nowrap text-slate-600">{time(r.processed_at)}</span> : null}
                </Td>
                <Td className="font-mono text-xs">
                  {r.trx_id}
                  <span className="block">{r.gateway_trx_id ?? ''}</span>
                </Td>
                <Td>{brandName(r.brand_id)}</Td>
                <Td className="whitespace-nowrap">{time(r.created_at)}</Td>
                <Td>
                  {can('operate') && r.status === 'pending' ? (
                    <span className="flex gap-2">
                      <Button
                        variant="primary"
                        onClick={() => {
                          complete.reset();
                          setPayout({ reference: '', note: '' });
                          setCompleting({ id: r.id, manual: r.gateway_type === 'manual', label: money(r.amount, r.currency) });
                        }}
                      >
                        Complete…
                      </Button>
                      <Button
                        variant="danger"
                        onClick={() => {
                          setReason('');
                          setFailing(r.id);
                        }}
                      >
                        Fail…
                      </Button>
                    </span>
                  ) : null}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Dialog open={completing !== null} title={`Complete refund #${completing?.id ?? ''}`} onClose={() => setCompleting(null)}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            const reference = payout.reference.trim();
            if (completing && (reference || !completing.manual)) complete.mutate({ id: completing.id, reference, note: payout.note.trim() });
          }}
        >
          <p className="text-sm text-slate-700">
            Record the money sent back ({completing?.label}). The merchant is told the refund is completed.
          </p>
          <Field
            label={completing?.manual ? 'Wallet reference (required)' : 'Wallet reference (optional)'}
            htmlFor="complete-reference"
            hint="The transaction id of the money sent back, as the wallet shows it"
          >
            <Input
              id="complete-reference"
              required={completing?.manual}
              maxLength={100}
              autoComplete="off"
              value={payout.reference}
              onChange={(e) => setPayout((p) => ({ ...p, reference: e.target.value }))}
            />
          </Field>
          <Field label="Note (optional)" htmlFor="complete-note">
            <TextArea id="complete-note" rows={2} maxLength={500} value={payout.note} onChange={(e) => setPayout((p) => ({ ...p, note: e.target.value }))} />
          </Field>
          <ErrorBox error={complete.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setCompleting(null)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={complete.isPending} disabled={!!completing?.manual && !payout.reference.trim()}>
              Mark completed
            </Button>
          </div>
        </form>
      </Dialog>
      <Dialog open={failing !== null} title={`Mark refund #${failing ?? ''} failed`} onClose={() => setFailing(null)}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (failing && reason.trim()) fail.mutate({ id: failing, reason: reason.trim() });
          }}
        >
          <Field label="Reason (shown to the merchant)" htmlFor="fail-reason">
            <TextArea id="fail-reason" rows={3} required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
          </Field>
          <ErrorBox error={fail.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setFailing(null)}>Cancel</Button>
            <Button type="submit" variant="danger" busy={fail.isPending} disabled={!reason.trim()}>
              Mark failed
            </Button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}
