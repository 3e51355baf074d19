import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { reconciliationItemSchema, reconciliationUploadSchema } from '../../../contract/admin/reconciliation.ts';
import { MAX_STATEMENT_CHARS } from '../../../contract/admin/reconciliation.ts';
import { reconciliationCategories, type ReconciliationCategory } from '../../../contract/vocabulary.ts';
import { ApiError, api, ok } from '../api.ts';
import { download } from '../csv.ts';
import { useMode } from '../mode.tsx';
import { useBrands } from '../queries.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import { useSession } from '../session.tsx';
import { Badge, Button, Card, Empty, ErrorBox, Field, Input, Loading, ModeBadge, Notice, PageTitle, Select, StatusBadge, Table, Td, count, money, time, type Tone } from '../components/ui.tsx';

type Upload = z.output<typeof reconciliationUploadSchema>;
type Item = z.output<typeof reconciliationItemSchema>;

const CATEGORY: Record<ReconciliationCategory, { words: string; tone: Tone }> = {
  statement_only: { words: 'money, no SMS', tone: 'amber' },
  sms_only: { words: 'SMS, not on statement', tone: 'red' },
  amount_mismatch: { words: 'amount differs', tone: 'red' },
  fee_difference: { words: 'fee differs', tone: 'amber' },
  matched: { words: 'matched', tone: 'green' },
};

/** Today in Asia/Dhaka, the wallets' day (UTC+06:00 all year). */
const dhakaToday = () => new Date(Date.now() + 6 * 3_600_000).toISOString().slice(0, 10);

/**
 * Statement reconciliation (docs/reconciliation.md): upload a wallet account's
 * statement for a day, read the report by category, download it. A finding is
 * acted on elsewhere: a `statement_only` payment is completed on its payment's
 * page (Verify), never here.
 */
export function ReconciliationScreen() {
  const { query } = useLocation();
  const reportId = query.get('report');
  return reportId && /^[1-9][0-9]{0,15}$/.test(reportId) ? <ReportView id={reportId} /> : <UploadsView />;
}

function UploadsView() {
  const brands = useBrands();
  const { mode } = useMode();
  const { can } = useSession();
  const queryClient = useQueryClient();
  const [brandId, setBrandId] = useState('');
  const current = brandId || String(brands.data?.[0]?.id ?? '');
  const [accountId, setAccountId] = useState('');
  const [day, setDay] = useState(dhakaToday());
  const [file, setFile] = useState<File | null>(null);
  const [rowErrors, setRowErrors] = useState<string[]>([]);

  const accounts = useQuery({
    queryKey: ['wallet-accounts', current],
    enabled: !!current,
    queryFn: async () => (await ok(api.walletAccounts.list({ params: { brand_id: current }, query: {} }))).data,
  });
  const account = accountId || String(accounts.data?.[0]?.id ?? '');
  const reports = useQuery({
    queryKey: ['statements', current, mode],
    enabled: !!current,
    queryFn: async () => (await ok(api.reconciliation.list({ query: { brand_id: current, mode, per_page: '50' } }))).data,
  });

  const upload = useMutation({
    mutationFn: async () => {
      setRowErrors([]);
      if (!file) throw new Error('Choose the statement file first.');
      if (file.size > MAX_STATEMENT_CHARS * 2) throw new Error('The file is too large for one day: export one day of the statement.');
      const content = await file.text();
      const res = await api.reconciliation.upload({ params: { account_id: account }, body: { day, mode, file_name: file.name.slice(0, 200), content } });
      if (res.status === 201) return res.body.data;
      const body = res.body as { errors?: Array<{ code: string; message: string }> };
      if (body.errors?.[0]?.code === 'STATEMENT_ROWS_INVALID') setRowErrors(body.errors.map((e) => e.message));
      throw new ApiError(res.status, res.body);
    },
    onSuccess: async (data) => {
      await queryClient.invalidateQueries({ queryKey: ['statements'] });
      navigate(`/reconciliation?report=${data.upload.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    upload.mutate();
  };
  const noAccounts = accounts.data !== undefined && accounts.data.length === 0;

  return (
    <div>
      <PageTitle
        actions={
          <Select aria-label="Brand" value={current} onChange={(e) => { setBrandId(e.target.value); setAccountId(''); }} className="w-48">
            {(brands.data ?? []).map((b) => (
              <option key={b.id} value={b.id}>{b.name}</option>
            ))}
          </Select>
        }
      >
        Statement reconciliation
      </PageTitle>
      <p className="mb-3 max-w-3xl text-sm text-slate-700">
        Upload a wallet account&rsquo;s own statement (bKash, Nagad, or the generic CSV) for a day. Its incoming rows are lined up with the SMS and payments the service knows, by trx id.
        Nothing is completed here: money that arrived with no SMS is completed on its payment&rsquo;s page, by a person.
      </p>
      <ErrorBox error={brands.error ?? accounts.error ?? reports.error} />
      {can('operate') ? (
        <Card title="Upload a statement" className="mb-4">
          {noAccounts ? (
            <Empty>This brand has no wallet account: add one under Wallet accounts first.</Empty>
          ) : (
            <form onSubmit={submit} className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4" aria-label="Upload a statement">
              <Field label="Wallet account" htmlFor="recon-account">
                <Select id="recon-account" value={account} onChange={(e) => setAccountId(e.target.value)}>
                  {(accounts.data ?? []).map((a) => (
                    <option key={a.id} value={a.id}>{`${a.gateway} ${a.number}${a.label ? ` (${a.label})` : ''}`}</option>
                  ))}
                </Select>
              </Field>
              <Field label="Day (Asia/Dhaka)" htmlFor="recon-day">
                <Input id="recon-day" type="date" required value={day} max={dhakaToday()} onChange={(e) => setDay(e.target.value)} />
              </Field>
              <Field label="Statement file (CSV or text)" htmlFor="recon-file" hint={`Compared with ${mode} SMS and payments.`}>
                <Input id="recon-file" type="file" required accept=".csv,.tsv,.txt,text/csv,text/plain,text/tab-separated-values" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
              </Field>
              <div className="flex items-end">
                <Button type="submit" variant="primary" busy={upload.isPending} disabled={!account}>
                  Upload and reconcile
                </Button>
              </div>
            </form>
          )}
          <ErrorBox error={upload.error} title="The statement was not stored" />
          {rowErrors.length ? (
            <ul className="mt-2 list-disc pl-5 text-sm text-red-900" aria-label="Rows that cannot be read">
              {rowErrors.map((m) => <li key={m}>{m}</li>)}
            </ul>
          ) : null}
        </Card>
      ) : null}
      <Card title={reports.data ? count(reports.data.length, 'report') : 'Reports'}>
        {reports.isPending && current ? (
          <Loading />
        ) : (reports.data ?? []).length === 0 ? (
          <Empty>No statement uploaded for this brand in {mode} mode yet.</Empty>
        ) : (
          <Table label="Reconciliation reports" head={['Day', 'Account', 'Format', 'Findings', 'Uploaded', '']}>
            {(reports.data ?? []).map((u) => (
              <tr key={u.id}>
                <Td className="whitespace-nowrap">{u.day}</Td>
                <Td className="whitespace-nowrap">{`${u.gateway} ${u.account_number}`}</Td>
                <Td>{u.format}</Td>
                <Td><Counts upload={u} /></Td>
                <Td className="whitespace-nowrap">{`${time(u.created_at)} by ${u.uploaded_by}`}</Td>
                <Td><Link to={`/reconciliation?report=${u.id}`} className="text-indigo-700 underline">Open report<span className="sr-only">{` of ${u.day}, ${u.account_number}`}</span></Link></Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </div>
  );
}

function Counts({ upload }: { upload: Upload }) {
  const shown = reconciliationCategories.filter((c) => upload.counts[c] > 0);
  if (shown.length === 0) return <span className="text-slate-600">nothing on this day</span>;
  return (
    <span className="flex flex-wrap gap-1">
      {shown.map((c) => (
        <Badge key={c} tone={CATEGORY[c].tone}>{`${upload.counts[c]} ${CATEGORY[c].words}`}</Badge>
      ))}
    </span>
  );
}

function ReportView({ id }: { id: string }) {
  const report = useQuery({ queryKey: ['statement', id], queryFn: async () => (await ok(api.reconciliation.get({ params: { statement_id: id } }))).data });
  const [filter, setFilter] = useState<ReconciliationCategory | ''>('');
  const save = useMutation({
    mutationFn: async () => {
      const u = report.data!.upload;
      const body = await ok(api.reconciliation.downloadCsv({ params: { statement_id: id } }));
      download(`reconciliation-${u.gateway}-${u.account_number}-${u.day}-${u.id}.csv`, body);
    },
  });
  if (report.isPending) return <Loading what="Loading the report" />;
  if (report.error || !report.data) return <ErrorBox error={report.error} />;
  const { upload: u, items } = report.data;
  const shown = filter ? items.filter((i) => i.category === filter) : items;
  return (
    <div>
      <PageTitle actions={<Link to="/reconciliation" className="text-sm text-indigo-700 underline">All reports</Link>}>
        {`Reconciliation of ${u.gateway} ${u.account_number}, ${u.day}`}
      </PageTitle>
      <p className="mb-3 text-sm text-slate-700">
        <ModeBadge mode={u.mode} /> {`${u.format} statement${u.file_name ? ` ${u.file_name}` : ''}, ${count(u.row_count, 'row')}, uploaded ${time(u.created_at)} by ${u.uploaded_by}.`}
      </p>
      {u.counts.statement_only > 0 ? (
        <Notice tone="amber">
          {`${count(u.counts.statement_only, 'payment')} arrived with no SMS. Open each one's payment and verify it there (with a note), or paste the missed SMS under SMS inbox.`}
        </Notice>
      ) : null}
      <Card
        title={<Counts upload={u} />}
        actions={
          <>
            <Select aria-label="Show category" value={filter} onChange={(e) => setFilter(e.target.value as ReconciliationCategory | '')} className="w-52">
              <option value="">Every category</option>
              {reconciliationCategories.map((c) => <option key={c} value={c}>{CATEGORY[c].words}</option>)}
            </Select>
            <Button onClick={() => save.mutate()} busy={save.isPending}>Download CSV</Button>
          </>
        }
      >
        <ErrorBox error={save.error} />
        {shown.length === 0 ? (
          <Empty>No finding on this day.</Empty>
        ) : (
          <Table label="Findings" head={['Finding', 'Trx id', 'Time', 'Statement', 'SMS', 'From', 'What to do']}>
            {shown.map((i) => (
              <tr key={i.id} data-testid={`finding-${i.trx_id}`}>
                <Td><Badge tone={CATEGORY[i.category].tone}>{CATEGORY[i.category].words}</Badge></Td>
                <Td className="font-mono whitespace-nowrap">{i.trx_id}</Td>
                <Td className="whitespace-nowrap">{time(i.occurred_at ?? i.sms_time)}</Td>
                <Td className="whitespace-nowrap">{i.statement_amount ? `${money(i.statement_amount)}${i.statement_fee ? ` (fee ${money(i.statement_fee)})` : ''}` : '–'}</Td>
                <Td className="whitespace-nowrap">{i.sms_amount ? `${money(i.sms_amount)}${i.sms_fee ? ` (fee ${money(i.sms_fee)})` : ''}` : i.sms_record_id ? 'no amount' : '–'}</Td>
                <Td className="whitespace-nowrap">{i.counterparty ?? '–'}</Td>
                <Td><NextStep item={i} upload={u} /></Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
    </div>
  );
}

/** Where a person acts on a finding: the payment's page (Verify) or the payments list; nothing is done from here. */
function NextStep({ item, upload }: { item: Item; upload: Upload }) {
  const payment = item.transaction_id !== null ? (
    <Link to={`/payments/${item.transaction_id}`} className="text-indigo-700 underline">
      {item.category === 'statement_only' ? 'Open the payment to verify it' : 'Open the payment'}
      <span className="sr-only">{` for ${item.trx_id}`}</span>
    </Link>
  ) : null;
  if (item.category === 'matched') return payment ?? <span className="text-slate-600">nothing</span>;
  if (item.category === 'statement_only') {
    return (
      <div className="flex flex-col gap-1 text-sm">
        {payment ?? (
          <Link to={`/payments?brand_id=${upload.brand_id}&gateway=${upload.gateway}&status=pending&from=${upload.day}&to=${upload.day}`} className="text-indigo-700 underline">
            Find the payment to verify<span className="sr-only">{` for ${item.trx_id}`}</span>
          </Link>
        )}
        {item.transaction_status ? <span><StatusBadge status={item.transaction_status} /></span> : null}
        <Link to="/sms?paste=1" className="text-indigo-700 underline">
          Paste the missed SMS<span className="sr-only">{` of ${item.trx_id}`}</span>
        </Link>
        {item.hint_transaction_ids.length ? (
          <span className="text-slate-700">
            Same amount, near the time:{' '}
            {item.hint_transaction_ids.map((h, n) => (
              <span key={h}>{n ? ', ' : ''}<Link to={`/payments/${h}`} className="text-indigo-700 underline">{`payment #${h}`}</Link></span>
            ))}
            {' '}(a hint: check the customer first)
          </span>
        ) : null}
      </div>
    );
  }
  if (item.category === 'sms_only') {
    return (
      <div className="flex flex-col gap-1 text-sm">
        <span className="text-red-900">Not on the statement: a forged SMS, or one of another account. Do not verify payments with it.</span>
        {payment}
      </div>
    );
  }
  return (
    <div className="flex flex-col gap-1 text-sm">
      <span>{item.category === 'amount_mismatch' ? 'The statement is right about the money: check what was completed.' : 'Check the fee the wallet charged.'}</span>
      {payment}
    </div>
  );
}
