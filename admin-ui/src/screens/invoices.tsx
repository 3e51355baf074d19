import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { invoiceStatuses, type InvoiceStatus } from '../../../contract/vocabulary.ts';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrands } from '../queries.ts';
import { Button, Card, Dialog, Empty, ErrorBox, Loading, Notice, PageTitle, Select, StatusBadge, Table, Td, money, time, count } from '../components/ui.tsx';

/**
 * Invoices of every brand in the operator's scope (README, "Invoices"): filter
 * by brand and status, open one to see its lines and the payments made from
 * its hosted page, void it or e-mail it to the customer again (operators;
 * both audited). Merchants create and send invoices through the API.
 */
export function InvoicesScreen() {
  const { mode } = useMode();
  const { can } = useSession();
  const brands = useBrands();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<'' | InvoiceStatus>('');
  const [brandId, setBrandId] = useState('');
  const [openId, setOpenId] = useState<string | null>(null);
  const [confirmVoid, setConfirmVoid] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const list = useQuery({
    queryKey: ['invoices', mode, status, brandId],
    queryFn: () => ok(api.invoices.list({ query: { mode, per_page: '100', ...(status ? { status } : {}), ...(brandId ? { brand_id: brandId } : {}) } })),
  });
  const detail = useQuery({
    queryKey: ['invoice', openId],
    enabled: openId !== null,
    queryFn: async () => (await ok(api.invoices.get({ params: { invoice_id: openId! } }))).data,
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['invoices'] }).then(() => queryClient.invalidateQueries({ queryKey: ['invoice'] }));
  const voidIt = useMutation({
    mutationFn: async (id: string) => (await ok(api.invoices.void({ params: { invoice_id: id }, body: {} }))).data,
    onSuccess: async (i) => {
      setConfirmVoid(false);
      setNotice(`Invoice ${i.number} of ${i.brand_name} is void.`);
      await refresh();
    },
  });
  const resend = useMutation({
    mutationFn: async (id: string) => (await ok(api.invoices.resend({ params: { invoice_id: id }, body: {} }))).data,
    onSuccess: async (i) => {
      setNotice(`Invoice ${i.number} was e-mailed to the customer again.`);
      await refresh();
    },
  });
  const inv = detail.data;

  return (
    <div>
      <PageTitle>Invoices</PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={list.error} />
      <Card
        title={list.data ? count(list.data.meta.total, 'invoice') : 'Invoices'}
        actions={
          <>
            <Select aria-label="Brand" value={brandId} onChange={(e) => setBrandId(e.target.value)} className="w-44">
              <option value="">every brand</option>
              {(brands.data ?? []).map((b) => (
                <option key={b.id} value={String(b.id)}>
                  {b.name}
                </option>
              ))}
            </Select>
            <Select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value as typeof status)} className="w-36">
              <option value="">any status</option>
              {invoiceStatuses.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </Select>
          </>
        }
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No invoice.</Empty>
        ) : (
          <Table label="Invoices" head={['Invoice', 'Customer', 'Total', 'Paid', 'Status', 'Due', 'Brand', '']}>
            {(list.data?.data ?? []).map((i) => (
              <tr key={i.id}>
                <Td className="font-mono whitespace-nowrap">{i.number}</Td>
                <Td>{i.customer_name ?? '—'}</Td>
                <Td className="whitespace-nowrap">{money(i.total, i.currency)}</Td>
                <Td className="whitespace-nowrap">{money(i.amount_paid, i.currency)}</Td>
                <Td>
                  <StatusBadge status={i.status} />
                </Td>
                <Td className="whitespace-nowrap">{i.due_date}</Td>
                <Td>{i.brand_name}</Td>
                <Td>
                  <Button
                    onClick={() => {
                      voidIt.reset();
                      resend.reset();
                      setOpenId(i.id);
                    }}
                    aria-label={`Open invoice ${i.number} of ${i.brand_name}`}
                  >
                    Open
                  </Button>
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      <Dialog open={openId !== null} title={inv ? `Invoice ${inv.number} · ${inv.brand_name}` : 'Invoice'} onClose={() => setOpenId(null)}>
        {detail.isPending ? (
          <Loading />
        ) : inv ? (
          <div className="flex flex-col gap-3 text-sm">
            <p>
              <StatusBadge status={inv.status} /> due {inv.due_date} · {inv.customer_name ?? 'customer without a name'}
            </p>
            <Table label="Lines" head={['Description', 'Qty', 'Unit price', 'Amount']}>
              {inv.lines.map((l, n) => (
                <tr key={n}>
                  <Td>{l.description}</Td>
                  <Td>{l.quantity}</Td>
                  <Td className="whitespace-nowrap">{money(l.unit_price, inv.currency)}</Td>
                  <Td className="whitespace-nowrap">{money(l.amount, inv.currency)}</Td>
                </tr>
              ))}
            </Table>
            <dl className="grid grid-cols-2 gap-1">
              <dt>Subtotal</dt>
              <dd className="text-right">{money(inv.subtotal, inv.currency)}</dd>
              {inv.discount ? (
                <>
                  <dt>{inv.discount.description}</dt>
                  <dd className="text-right">-{money(inv.discount.amount, inv.currency)}</dd>
                </>
              ) : null}
              {inv.tax ? (
                <>
                  <dt>
                    {inv.tax.description} ({inv.tax.rate}%)
                  </dt>
                  <dd className="text-right">{money(inv.tax.amount, inv.currency)}</dd>
                </>
              ) : null}
              <dt className="font-semibold">Total</dt>
              <dd className="text-right font-semibold">{money(inv.total, inv.currency)}</dd>
              <dt>Paid</dt>
              <dd className="text-right">{money(inv.amount_paid, inv.currency)}</dd>
              <dt className="font-semibold">Remaining</dt>
              <dd className="text-right font-semibold">{money(inv.amount_remaining, inv.currency)}</dd>
            </dl>
            <h3 className="font-semibold">Payments</h3>
            {inv.payments.length === 0 ? (
              <Empty>No payment yet.</Empty>
            ) : (
              <Table label="Payments of the invoice" head={['Payment', 'Amount', 'Status', 'Created']}>
                {inv.payments.map((p) => (
                  <tr key={p.payment_id}>
                    <Td className="font-mono text-xs">{p.payment_id}</Td>
                    <Td className="whitespace-nowrap">{money(p.amount, inv.currency)}</Td>
                    <Td>
                      <StatusBadge status={p.status} />
                    </Td>
                    <Td className="whitespace-nowrap">{time(p.created_at)}</Td>
                  </tr>
                ))}
              </Table>
            )}
            <p>
              <a className="text-blue-700 underline" href={inv.hosted_url} target="_blank" rel="noreferrer">
                Hosted page
              </a>{' '}
              ·{' '}
              <a className="text-blue-700 underline" href={inv.pdf_url}>
                PDF
              </a>
            </p>
            <ErrorBox error={voidIt.error ?? resend.error} />
            {can('operate') && inv.status !== 'void' && inv.status !== 'paid' ? (
              confirmVoid ? (
                <div className="flex justify-end gap-2">
                  <span className="self-center">Void {inv.number}? The customer can no longer pay it.</span>
                  <Button onClick={() => setConfirmVoid(false)}>Keep it</Button>
                  <Button variant="danger" busy={voidIt.isPending} onClick={() => voidIt.mutate(inv.id)}>
                    Void invoice
                  </Button>
                </div>
              ) : (
                <div className="flex justify-end gap-2">
                  <Button busy={resend.isPending} onClick={() => resend.mutate(inv.id)}>
                    E-mail again
                  </Button>
                  <Button variant="danger" onClick={() => setConfirmVoid(true)}>
                    Void…
                  </Button>
                </div>
              )
            ) : null}
          </div>
        ) : (
          <ErrorBox error={detail.error} />
        )}
      </Dialog>
    </div>
  );
}
