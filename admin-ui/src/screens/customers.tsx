import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { adminCustomerSchema, importReportSchema } from '../../../contract/admin/customers.ts';
import { api, ok } from '../api.ts';
import { download } from '../csv.ts';
import { useMode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrands } from '../queries.ts';
import { Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, ModeBadge, Notice, PageTitle, Select, Table, Td, count, time } from '../components/ui.tsx';
import { FieldError, invalidProps, unplaced } from '../components/field-error.tsx';

type Customer = z.output<typeof adminCustomerSchema>;
type Report = z.output<typeof importReportSchema>;

const FIELDS = ['name', 'email', 'phone'] as const;
const PER_PAGE = 50;
const REASONS: Record<Report['refused'][number]['reason'], string> = {
  invalid_email: 'bad email',
  invalid_phone: 'bad phone',
  missing_contact: 'no email or phone',
  duplicate_in_file: 'duplicate in the file',
  duplicate_existing: 'already a customer',
};

/**
 * A brand's customers in the console's mode, contact details masked. Operators
 * add, change, delete (erase) and import them; owners export them in clear. Every
 * change is in the audit log.
 */
export function CustomersScreen() {
  const brands = useBrands();
  const { mode } = useMode();
  const { can } = useSession();
  const operate = can('operate');
  const owner = can('own');
  const queryClient = useQueryClient();
  const [brandId, setBrandId] = useState('');
  const current = brandId || String(brands.data?.[0]?.id ?? '');
  const [page, setPage] = useState(1);
  const [editing, setEditing] = useState<Customer | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Customer | null>(null);
  const [importing, setImporting] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const customers = useQuery({
    queryKey: ['customers', current, mode, page],
    enabled: !!current,
    queryFn: async () => ok(api.customers.list({ params: { brand_id: current }, query: { mode, page: String(page), per_page: String(PER_PAGE) } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['customers', current] });
  const remove = useMutation({
    mutationFn: async (c: Customer) => {
      await ok(api.customers.delete({ params: { customer_id: String(c.id) }, body: {} }));
      return c;
    },
    onSuccess: async (c) => {
      setDeleting(null);
      setNotice(`${c.name ?? c.email_masked ?? c.phone_masked} is deleted: their personal data is erased, their payments stay.`);
      await refresh();
    },
  });
  const exporting = useMutation({
    mutationFn: async () => (await ok(api.customers.export({ params: { brand_id: current }, body: { mode } }))).data,
    onSuccess: (e) => {
      download(e.filename, e.csv);
      setNotice(`Exported ${count(e.count, 'customer')} to ${e.filename}.`);
    },
  });
  const label = (c: Customer) => c.name ?? c.email_masked ?? c.phone_masked ?? `#${c.id}`;
  const meta = customers.data?.meta;

  return (
    <div>
      <PageTitle
        actions={
          <div className="flex flex-wrap items-center gap-2">
            <Select
              aria-label="Brand"
              value={current}
              onChange={(e) => {
                setBrandId(e.target.value);
                setPage(1);
                setNotice(null);
              }}
              className="w-48"
            >
              {(brands.data ?? []).map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </Select>
            {operate ? (
              <>
                <Button variant="primary" disabled={!current} onClick={() => setEditing('new')}>
                  Add customer
                </Button>
                <Button disabled={!current} onClick={() => setImporting(true)}>
                  Import CSV
                </Button>
              </>
            ) : null}
            {owner ? (
              <Button disabled={!current} busy={exporting.isPending} onClick={() => exporting.mutate()}>
                Export CSV
              </Button>
            ) : null}
          </div>
        }
      >
        Customers
      </PageTitle>
      <p className="mb-3 max-w-3xl text-sm text-slate-700">
        The brand&rsquo;s customers in <ModeBadge mode={mode} /> mode, email and phone masked. Payments add customers by themselves. Deleting a customer erases their personal data
        for good; their payments stay. An export holds every customer&rsquo;s details in clear: owners only, and it is recorded in the audit log.
      </p>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={brands.error ?? customers.error ?? exporting.error} />
      <Card title={meta ? count(meta.total, 'customer') : 'Customers'}>
        {customers.isPending && current ? (
          <Loading />
        ) : (customers.data?.data ?? []).length === 0 ? (
          <Empty>No customer in this mode yet.</Empty>
        ) : (
          <Table label="Customers" head={['Name', 'Email', 'Phone', 'Added', ...(operate ? [''] : [])]}>
            {(customers.data?.data ?? []).map((c) => (
              <tr key={c.id} data-testid={`customer-${c.id}`}>
                <Td>{c.name ?? <span className="text-slate-600">no name</span>}</Td>
                <Td className="font-mono">{c.email_masked ?? '—'}</Td>
                <Td className="font-mono whitespace-nowrap">{c.phone_masked ?? '—'}</Td>
                <Td className="whitespace-nowrap">{time(c.created_at)}</Td>
                {operate ? (
                  <Td>
                    <div className="flex flex-wrap gap-2">
                      <Button aria-label={`Edit ${label(c)}`} onClick={() => setEditing(c)}>
                        Edit
                      </Button>
                      <Button
                        variant="danger"
                        aria-label={`Delete ${label(c)}`}
                        onClick={() => {
                          remove.reset();
                          setDeleting(c);
                        }}
                      >
                        Delete
                      </Button>
                    </div>
                  </Td>
                ) : null}
              </tr>
            ))}
          </Table>
        )}
        {meta && meta.total_pages > 1 ? (
          <div className="mt-3 flex items-center gap-2 text-sm">
            <Button disabled={page <= 1} onClick={() => setPage((p) => p - 1)}>
              Previous
            </Button>
            <span>
              Page {meta.page} of {meta.total_pages}
            </span>
            <Button disabled={page >= meta.total_pages} onClick={() => setPage((p) => p + 1)}>
              Next
            </Button>
          </div>
        ) : null}
      </Card>

      {editing && current ? (
        <CustomerDialog
          key={editing === 'new' ? 'new' : editing.id}
          brandId={current}
          mode={mode}
          customer={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={async (c, created) => {
            setEditing(null);
            setNotice(`${label(c)} ${created ? 'is added' : 'is saved'}.`);
            await refresh();
          }}
        />
      ) : null}

      {importing && current ? (
        <ImportDialog
          brandId={current}
          mode={mode}
          onClose={() => setImporting(false)}
          onImported={async (r) => {
            setNotice(`Imported ${count(r.accepted, 'customer')}; ${count(r.refused.length, 'row')} refused.`);
            await refresh();
          }}
        />
      ) : null}

      <Dialog open={deleting !== null} title={`Delete ${deleting ? label(deleting) : ''}?`} onClose={() => setDeleting(null)}>
        <p className="mb-3 text-sm text-slate-700">Their name, email and phone are erased for good. Their payments stay, without their personal data. This cannot be undone.</p>
        <ErrorBox error={remove.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>Cancel</Button>
          <Button variant="danger" busy={remove.isPending} onClick={() => deleting && remove.mutate(deleting)}>
            Delete customer
          </Button>
        </div>
      </Dialog>
    </div>
  );
}

function CustomerDialog({
  brandId,
  mode,
  customer,
  onClose,
  onSaved,
}: {
  brandId: string;
  mode: 'live' | 'test';
  customer: Customer | null;
  onClose(): void;
  onSaved(c: Customer, created: boolean): void;
}) {
  const [form, setForm] = useState({ name: customer?.name ?? '', email: '', phone: '' });
  // Removing a detail the customer has: ticked, it is sent as null (the server keeps one of email and phone, and says so at the email field).
  const [remove, setRemove] = useState({ email: false, phone: false });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));
  const save = useMutation({
    mutationFn: async () => {
      if (customer) {
        // Contact details are shown masked: an empty box keeps the current one, a ticked "Remove" removes it.
        const body: { name?: string | null; email?: string | null; phone?: string | null } = { name: form.name.trim() || null };
        if (remove.email) body.email = null;
        else if (form.email.trim()) body.email = form.email.trim();
        if (remove.phone) body.phone = null;
        else if (form.phone.trim()) body.phone = form.phone.trim();
        return (await ok(api.customers.update({ params: { customer_id: String(customer.id) }, body }))).data;
      }
      return (
        await ok(
          api.customers.create({
            params: { brand_id: brandId },
            body: { mode, name: form.name.trim() || null, email: form.email.trim() || null, phone: form.phone.trim() || null },
          }),
        )
      ).data;
    },
    onSuccess: (c) => onSaved(c, customer === null),
  });
  const e = save.error;
  return (
    <Dialog open title={customer ? 'Edit customer' : 'Add a customer'} onClose={onClose}>
      <form
        className="flex flex-col gap-3"
        noValidate
        onSubmit={(ev) => {
          ev.preventDefault();
          save.mutate();
        }}
      >
        <Field label="Name" htmlFor="cu-name">
          <Input id="cu-name" autoComplete="off" value={form.name} onChange={set('name')} {...invalidProps(e, 'name', 'cu-name')} />
          <FieldError error={e} field="name" id="cu-name" />
        </Field>
        <Field label="Email" htmlFor="cu-email" hint={customer ? `Now ${customer.email_masked ?? 'none'}; empty keeps it.` : 'An email or a phone is needed.'}>
          <Input id="cu-email" type="email" autoComplete="off" value={form.email} disabled={remove.email} onChange={set('email')} {...invalidProps(e, 'email', 'cu-email')} />
          {customer?.email_masked ? <RemoveBox id="cu-email-remove" what="email" checked={remove.email} onChange={(v) => setRemove((r) => ({ ...r, email: v }))} /> : null}
          <FieldError error={e} field="email" id="cu-email" />
        </Field>
        <Field label="Phone" htmlFor="cu-phone" hint={customer ? `Now ${customer.phone_masked ?? 'none'}; empty keeps it.` : 'E.g. 01712345678.'}>
          <Input id="cu-phone" inputMode="tel" autoComplete="off" value={form.phone} disabled={remove.phone} onChange={set('phone')} {...invalidProps(e, 'phone', 'cu-phone')} />
          {customer?.phone_masked ? <RemoveBox id="cu-phone-remove" what="phone" checked={remove.phone} onChange={(v) => setRemove((r) => ({ ...r, phone: v }))} /> : null}
          <FieldError error={e} field="phone" id="cu-phone" />
        </Field>
        <ErrorBox error={unplaced(e, FIELDS)} />
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={save.isPending}>
            {customer ? 'Save customer' : 'Add customer'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

/** A tick box under a masked detail: remove it on save (its value is not shown, so it cannot be emptied). */
function RemoveBox({ id, what, checked, onChange }: { id: string; what: string; checked: boolean; onChange(v: boolean): void }) {
  return (
    <label htmlFor={id} className="mt-1 flex items-center gap-2 text-sm">
      <input id={id} type="checkbox" checked={checked} onChange={(ev) => onChange(ev.target.checked)} />
      <span>Remove the {what}</span>
    </label>
  );
}

/** Check a CSV file first (nothing written), then import its valid rows in one go; the refused rows are listed with their line and reason. */
function ImportDialog({ brandId, mode, onClose, onImported }: { brandId: string; mode: 'live' | 'test'; onClose(): void; onImported(r: Report): void }) {
  const [csv, setCsv] = useState<string | null>(null);
  const [fileName, setFileName] = useState('');
  const [report, setReport] = useState<Report | null>(null);
  const run = useMutation({
    mutationFn: async (dryRun: boolean) => (await ok(api.customers.import({ params: { brand_id: brandId }, body: { mode, csv: csv ?? '', dry_run: dryRun } }))).data,
    onSuccess: (r) => {
      setReport(r);
      if (!r.dry_run) onImported(r);
    },
  });
  return (
    <Dialog open title="Import customers from CSV" onClose={onClose}>
      <p className="mb-3 text-sm text-slate-700">
        A header row naming <code>name</code>, <code>email</code>, <code>phone</code>, then one customer per row (at most 1000 rows, 90 KiB). Valid rows are imported together; refused rows
        are listed and not imported. Importing the same file again adds nothing.
      </p>
      <Field label="CSV file" htmlFor="cu-file">
        <input
          id="cu-file"
          type="file"
          accept=".csv,text/csv"
          className="text-sm"
          onChange={async (ev) => {
            const file = ev.target.files?.[0];
            setReport(null);
            run.reset();
            setFileName(file?.name ?? '');
            setCsv(file ? await file.text() : null);
          }}
        />
      </Field>
      <ErrorBox error={run.error} />
      {report ? (
        <div className="my-3" data-testid="import-report">
          <p className="text-sm font-medium" role="status">
            {report.dry_run
              ? `${fileName}: ${count(report.accepted, 'row')} can be imported, ${count(report.refused.length, 'row')} refused.`
              : `Imported ${count(report.accepted, 'customer')}; ${count(report.refused.length, 'row')} refused.`}
          </p>
          {report.refused.length > 0 ? (
            <Table label="Refused rows" head={['Line', 'Why', 'Detail']}>
              {report.refused.map((r) => (
                <tr key={r.line}>
                  <Td>{r.line}</Td>
                  <Td className="whitespace-nowrap">{REASONS[r.reason]}</Td>
                  <Td>{r.message}</Td>
                </tr>
              ))}
            </Table>
          ) : null}
        </div>
      ) : null}
      <div className="mt-3 flex flex-wrap justify-end gap-2">
        <Button onClick={onClose}>{report && !report.dry_run ? 'Close' : 'Cancel'}</Button>
        <Button disabled={!csv} busy={run.isPending && run.variables === true} onClick={() => run.mutate(true)}>
          Check file
        </Button>
        <Button variant="primary" disabled={!report?.dry_run || report.accepted === 0} busy={run.isPending && run.variables === false} onClick={() => run.mutate(false)}>
          Import valid rows
        </Button>
      </div>
    </Dialog>
  );
}
