import { useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { useBrandName, useBrands } from '../queries.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { toCsv, download } from '../csv.ts';
import { Button, Card, Empty, ErrorBox, Field, Input, Loading, ModeBadge, PageTitle, Select, StatusBadge, Table, Td, count, money, time } from '../components/ui.tsx';

const STATUSES = ['pending', 'processing', 'awaiting_verification', 'completed', 'failed', 'expired'] as const;
type Status = (typeof STATUSES)[number];

/** The filters as the URL carries them (`customer` is one box for an e-mail or a phone). */
interface Filter {
  reference?: string;
  trx_id?: string;
  customer?: string;
  status?: Status;
  gateway?: string;
  brand_id?: string;
  from?: string;
  to?: string;
}
const FILTER_KEYS = ['reference', 'trx_id', 'customer', 'status', 'gateway', 'brand_id', 'from', 'to'] as const;

function filterFrom(query: URLSearchParams): Filter {
  const f: Filter = {};
  for (const k of FILTER_KEYS) {
    const v = query.get(k);
    if (v) (f as Record<string, string>)[k] = v;
  }
  if (f.status && !STATUSES.includes(f.status)) delete f.status;
  return f;
}

/** The API's query: a customer with `@` is an e-mail, else a phone number (the server normalises both). */
function apiFilter(f: Filter) {
  const { customer, ...rest } = f;
  if (!customer) return rest;
  return customer.includes('@') ? { ...rest, customer_email: customer } : { ...rest, customer_phone: customer };
}

export function PaymentsScreen() {
  const { mode } = useMode();
  const { query } = useLocation();
  const filter = filterFrom(query);
  const page = Math.max(1, Number(query.get('page') ?? '1') || 1);
  const brands = useBrands();
  const brandName = useBrandName();
  const [exporting, setExporting] = useState(false);
  const [exportError, setExportError] = useState<unknown>(null);

  const list = useQuery({
    queryKey: ['payments', mode, filter, page],
    queryFn: () => ok(api.transactions.list({ query: { ...apiFilter(filter), mode, page: String(page), per_page: '50' } })),
    refetchInterval: 15_000,
    placeholderData: (prev) => prev,
  });

  // An intent has no transaction until the customer picks a gateway: the list above cannot show
  // it, so a searched reference is also looked up among the payments nobody started paying.
  const searched = (filter.reference ?? filter.trx_id)?.trim();
  const unpaid = useQuery({
    queryKey: ['payments-unpaid', mode, searched, filter.brand_id],
    enabled: !!searched,
    queryFn: async () =>
      (await ok(api.payments.listUnpaid({ query: { reference: searched!, mode, ...(filter.brand_id ? { brand_id: filter.brand_id } : {}) } }))).data,
  });

  function apply(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const data = new FormData(e.currentTarget);
    const params = new URLSearchParams();
    for (const k of FILTER_KEYS) {
      const v = String(data.get(k) ?? '').trim();
      if (v) params.set(k, v);
    }
    navigate(`/payments${params.size ? `?${params}` : ''}`);
  }

  async function exportCsv() {
    setExporting(true);
    setExportError(null);
    try {
      const rows: Array<Array<string | number | null>> = [];
      for (let p = 1; p <= 100; p++) {
        const res = await ok(api.transactions.list({ query: { ...apiFilter(filter), mode, page: String(p), per_page: '100' } }));
        for (const t of res.data) rows.push([t.id, t.trx_id, t.payment_id, t.brand_id, t.mode, t.gateway, t.gateway_trx_id, t.amount, t.currency, t.fee, t.requested_amount, t.requested_currency, t.reference, t.status, t.failure_reason, t.completion_source, t.created_at, t.completed_at]);
        if (p >= res.meta.total_pages) break;
      }
      const header = ['id', 'trx_id', 'payment_id', 'brand_id', 'mode', 'gateway', 'gateway_trx_id', 'amount', 'currency', 'fee', 'requested_amount', 'requested_currency', 'reference', 'status', 'failure_reason', 'completion_source', 'created_at', 'completed_at'];
      download(`payments-${mode}-${new Date().toISOString().slice(0, 10)}.csv`, toCsv(header, rows));
    } catch (err) {
      setExportError(err);
    } finally {
      setExporting(false);
    }
  }

  const meta = list.data?.meta;
  const pageLink = (p: number) => {
    const params = new URLSearchParams(query);
    params.set('page', String(p));
    return `/payments?${params}`;
  };

  return (
    <div>
      <PageTitle
        actions={
          <Button onClick={exportCsv} busy={exporting} disabled={!meta || meta.total === 0}>
            Export CSV
          </Button>
        }
      >
        Payments
      </PageTitle>
      <Card className="mb-4">
        <form onSubmit={apply} className="grid grid-cols-2 gap-3 md:grid-cols-4 lg:grid-cols-6" aria-label="Search payments" key={query.toString()}>
          <div className="col-span-2">
            <Field label="Reference" htmlFor="f-ref" hint="Trx id, gateway trx id, payment id or the merchant's reference">
              <Input id="f-ref" name="reference" defaultValue={filter.reference ?? filter.trx_id ?? ''} placeholder="TRX… or 9BC7XK2M1A" />
            </Field>
          </div>
          <div className="col-span-2">
            <Field label="Customer" htmlFor="f-customer" hint="E-mail or phone number (01712345678 or +8801712345678)">
              <Input id="f-customer" name="customer" type="search" autoComplete="off" defaultValue={filter.customer ?? ''} placeholder="jane@example.com" />
            </Field>
          </div>
          <Field label="Status" htmlFor="f-status">
            <Select id="f-status" name="status" defaultValue={filter.status ?? ''}>
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.replace(/_/g, ' ')}
                </option>
              ))}
            </Select>
          </Field>
          <Field label="Gateway" htmlFor="f-gateway">
            <Input id="f-gateway" name="gateway" defaultValue={filter.gateway ?? ''} placeholder="bkash" />
          </Field>
          <Field label="Brand" htmlFor="f-brand">
            <Select id="f-brand" name="brand_id" defaultValue={filter.brand_id ?? ''}>
              <option value="">all</option>
              {(brands.data ?? []).map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </Select>
          </Field>
          <Field label="From" htmlFor="f-from">
            <Input id="f-from" name="from" type="date" defaultValue={filter.from ?? ''} />
          </Field>
          <Field label="To" htmlFor="f-to">
            <Input id="f-to" name="to" type="date" defaultValue={filter.to ?? ''} />
          </Field>
          <div className="col-span-2 flex items-end gap-2 md:col-span-3">
            <Button type="submit" variant="primary">
              Search
            </Button>
            <Button onClick={() => navigate('/payments')}>Clear</Button>
          </div>
        </form>
      </Card>
      <ErrorBox error={list.error ?? exportError ?? unpaid.error} />
      {searched && unpaid.data && unpaid.data.length > 0 ? (
        <Card className="mb-4" title={`${count(unpaid.data.length, 'payment')} not paid yet (no transaction)`}>
          <Table label="Payments not paid yet" head={['Payment id', 'Amount', 'Status', 'Reference', 'Brand', 'Created', 'Expires']}>
            {unpaid.data.map((p) => (
              <tr key={p.payment_id}>
                <Td className="font-mono text-xs break-all">{p.payment_id}</Td>
                <Td className="whitespace-nowrap">{money(p.amount, p.currency)}</Td>
                <Td>
                  <StatusBadge status={p.status} />
                </Td>
                <Td>{p.reference ?? '–'}</Td>
                <Td>{brandName(p.brand_id)}</Td>
                <Td className="whitespace-nowrap">{time(p.created_at)}</Td>
                <Td className="whitespace-nowrap">{time(p.expires_at)}</Td>
              </tr>
            ))}
          </Table>
          <p className="mt-2 text-xs text-slate-600">The customer has not chosen a gateway or sent money for these yet.</p>
        </Card>
      ) : null}
      <Card title={meta ? count(meta.total, 'payment') : 'Payments'}>
        {list.isPending ? (
          <Loading />
        ) : !list.data ? (
          <Empty>Nothing to show: the search was refused (see above).</Empty>
        ) : list.data.data.length === 0 ? (
          <Empty>{searched && unpaid.data?.length ? 'No transaction matches.' : 'No payment matches.'}</Empty>
        ) : (
          <Table label="Payments" head={['Reference', 'Amount', 'Status', 'Gateway', 'Brand', 'Created']}>
            {(list.data?.data ?? []).map((t) => (
              <tr key={t.id}>
                <Td>
                  <Link to={`/payments/${t.id}`} className="font-mono text-xs text-indigo-700 underline">
                    {t.trx_id}
                  </Link>
                  <span className="block text-xs text-slate-600">{t.reference ?? ''}</span>
                </Td>
                <Td className="whitespace-nowrap">{money(t.amount, t.currency)}</Td>
                <Td>
                  <StatusBadge status={t.status} />
                </Td>
                <Td>
                  {t.gateway}
                  <span className="block font-mono text-xs text-slate-600">{t.gateway_trx_id ?? ''}</span>
                </Td>
                <Td>{brandName(t.brand_id)}</Td>
                <Td className="whitespace-nowrap">{time(t.created_at)}</Td>
              </tr>
            ))}
          </Table>
        )}
        {meta && meta.total_pages > 1 ? (
          <nav className="mt-3 flex items-center justify-between text-sm" aria-label="Pages">
            {page > 1 ? <Link to={pageLink(page - 1)} className="text-indigo-700 underline">Previous</Link> : <span />}
            <span>
              Page {page} of {meta.total_pages}
            </span>
            {page < meta.total_pages ? <Link to={pageLink(page + 1)} className="text-indigo-700 underline">Next</Link> : <span />}
          </nav>
        ) : null}
      </Card>
    </div>
  );
}

export function PaymentDetailScreen({ id }: { id: string }) {
  const valid = /^[1-9][0-9]{0,15}$/.test(id);
  const tx = useQuery({
    queryKey: ['tx', Number(id)],
    enabled: valid,
    queryFn: async () => (await ok(api.transactions.get({ params: { transaction_id: id } }))).data,
  });
  const hooks = useQuery({
    queryKey: ['payment-webhooks', id, tx.data?.brand_id, tx.data?.mode],
    enabled: !!tx.data,
    // Deliveries carry the transaction id; the list filters by brand and mode, so look through the brand's recent ones.
    queryFn: async () => (await ok(api.webhookDeliveries.list({ query: { brand_id: String(tx.data!.brand_id), mode: tx.data!.mode, per_page: '100' } }))).data.filter((d) => d.transaction_id === Number(id)),
  });
  const timeline = useQuery({
    queryKey: ['timeline', id],
    enabled: valid,
    refetchInterval: 15_000,
    queryFn: async () => (await ok(api.transactions.timeline({ params: { transaction_id: id } }))).data,
  });
  if (!valid) return <ErrorBox error={new Error('Not a payment id')} />;
  const t = tx.data;
  return (
    <div>
      <PageTitle actions={<Link to="/payments" className="text-sm text-indigo-700 underline">All payments</Link>}>Payment {t?.trx_id ?? id}</PageTitle>
      <ErrorBox error={tx.error} />
      {tx.isPending ? <Loading /> : null}
      {t ? (
        <div className="grid gap-4 lg:grid-cols-2">
          <Card title="Transaction" actions={<><StatusBadge status={t.status} /> <ModeBadge mode={t.mode} /></>}>
            <dl className="grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1.5 text-sm">
              {(
                [
                  ['Amount', money(t.amount, t.currency)],
                  ['Fee', money(t.fee, t.currency)],
                  ['Requested', money(t.requested_amount, t.requested_currency)],
                  ['Exchange rate', t.exchange_rate ?? '–'],
                  ['Gateway', `${t.gateway} (${t.gateway_type}, ${t.method})`],
                  ['Gateway trx id', t.gateway_trx_id ?? '–'],
                  ['Merchant reference', t.reference ?? '–'],
                  ['Payer number', t.sender_number ?? 'not declared'],
                  ['Payment id', t.payment_id],
                  ['Completed by', t.completion_source ?? '–'],
                  ['Failure reason', t.failure_reason ?? '–'],
                  ['Created', time(t.created_at)],
                  ['Completed', time(t.completed_at)],
                ] as const
              ).map(([k, v]) => (
                <div key={k} className="contents">
                  <dt className="text-slate-600">{k}</dt>
                  <dd className="break-words max-sm:[overflow-wrap:anywhere]">{v}</dd>
                </div>
              ))}
            </dl>
            {t.status === 'awaiting_verification' ? (
              <p className="mt-3 text-sm">
                <Link to="/review" className="text-indigo-700 underline">
                  Decide it in the review queue
                </Link>
              </p>
            ) : null}
          </Card>
          {/* min-w-0: a wide table scrolls inside its card instead of widening the page on a phone. */}
          <div className="flex min-w-0 flex-col gap-4">
            <Card title="SMS records">
              {t.sms_records.length === 0 ? (
                <Empty>No SMS matched or lists it as a candidate.</Empty>
              ) : (
                <Table label="SMS records" head={['SMS', 'Role', 'Status', 'Amount', 'Trx id', 'Received']}>
                  {t.sms_records.map((s) => (
                    <tr key={s.id}>
                      <Td>#{s.id}</Td>
                      <Td>{s.role}</Td>
                      <Td>
                        <StatusBadge status={s.match_status} />
                      </Td>
                      <Td>{money(s.parsed_amount)}</Td>
                      <Td className="font-mono text-xs">{s.parsed_trx_id ?? '–'}</Td>
                      <Td className="whitespace-nowrap">{time(s.received_at)}</Td>
                    </tr>
                  ))}
                </Table>
              )}
            </Card>
            <Card title="Timeline">
              <ErrorBox error={timeline.error} />
              {timeline.isPending ? (
                <Loading />
              ) : (
                <ol className="flex flex-col gap-2 border-l-2 border-slate-200 pl-3 text-sm" aria-label="Timeline">
                  {(timeline.data ?? []).map((e, i) => (
                    <li key={i}>
                      <span className="text-xs text-slate-600">{time(e.at)}</span> <span className="font-medium">{e.title}</span> {e.status ? <StatusBadge status={e.status} /> : null}
                      {e.actor ? <span className="block text-xs text-slate-600">by {e.actor}</span> : null}
                      {e.note ? <q className="block text-xs break-words whitespace-pre-wrap text-slate-800">{e.note}</q> : null}
                    </li>
                  ))}
                </ol>
              )}
            </Card>
            <Card title="Webhooks">
              <ErrorBox error={hooks.error} />
              {hooks.isPending ? (
                <Loading />
              ) : hooks.data?.length === 0 ? (
                <Empty>No webhook sent for it.</Empty>
              ) : (
                <Table label="Webhooks" head={['Event', 'Status', 'Attempts', 'Last response']}>
                  {(hooks.data ?? []).map((d) => (
                    <tr key={d.id}>
                      <Td>{d.event}</Td>
                      <Td>
                        <StatusBadge status={d.status} />
                      </Td>
                      <Td>{d.attempts}</Td>
                      <Td>{d.response_status ?? d.last_error ?? '–'}</Td>
                    </tr>
                  ))}
                </Table>
              )}
            </Card>
          </div>
        </div>
      ) : null}
    </div>
  );
}
