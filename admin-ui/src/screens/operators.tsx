import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useOperator, useSession, type Role } from '../session.tsx';
import { useBrands } from '../queries.ts';
import { parseBrandList } from '../brand-list.ts';
import { Badge, Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, Notice, PageTitle, Select, Table, Td, time } from '../components/ui.tsx';

const ROLES: Role[] = ['viewer', 'operator', 'owner'];

/** Who may log in (owner only): add, change role or brands, disable, reset a password (shown once). */
export function OperatorsScreen() {
  const { can } = useSession();
  const me = useOperator();
  const queryClient = useQueryClient();
  const brands = useBrands();
  const [addOpen, setAddOpen] = useState(false);
  const [form, setForm] = useState({ email: '', name: '', role: 'operator' as Role, brands: '' });
  const [secret, setSecret] = useState<{ email: string; password: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const list = useQuery({ queryKey: ['operators'], enabled: can('own'), queryFn: async () => (await ok(api.operators.list())).data });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['operators'] });
  const [brandsError, setBrandsError] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: async (brandIds: number[] | null) =>
      (await ok(api.operators.create({ body: { email: form.email.trim(), name: form.name.trim(), role: form.role, brand_ids: brandIds } }))).data,
    onSuccess: async (r) => {
      setAddOpen(false);
      setSecret({ email: r.operator.email, password: r.password });
      await refresh();
    },
  });
  const update = useMutation({
    mutationFn: async (v: { id: string; body: { role?: Role; disabled?: boolean } }) => (await ok(api.operators.update({ params: { operator_id: v.id }, body: v.body }))).data,
    onSuccess: async (o) => {
      setNotice(`${o.email}: ${o.disabled ? 'disabled' : o.role}.`);
      await refresh();
    },
  });
  const reset = useMutation({
    mutationFn: async (id: string) => (await ok(api.operators.resetPassword({ params: { operator_id: id } }))).data,
    onSuccess: (r) => setSecret({ email: r.operator.email, password: r.password }),
  });

  if (!can('own')) {
    return (
      <div>
        <PageTitle>Operators</PageTitle>
        <Card>
          <Empty>Only an owner manages operators.</Empty>
        </Card>
      </div>
    );
  }
  return (
    <div>
      <PageTitle
        actions={
          <Button
            variant="primary"
            onClick={() => {
              setForm({ email: '', name: '', role: 'operator', brands: '' });
              create.reset();
              setBrandsError(null);
              setAddOpen(true);
            }}
          >
            Add operator
          </Button>
        }
      >
        Operators
      </PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={list.error ?? update.error ?? reset.error} />
      <Card>
        {list.isPending ? (
          <Loading />
        ) : list.data?.length === 0 ? (
          <Empty>No operator.</Empty>
        ) : (
          <Table label="Operators" head={['Operator', 'Role', 'Brands', 'Last login', '']}>
            {(list.data ?? []).map((o) => (
              <tr key={o.id}>
                <Td>
                  <span className="font-medium">{o.name}</span>
                  <span className="block text-xs text-slate-600">{o.email}</span>
                  {o.disabled ? <Badge tone="red">disabled</Badge> : null} {o.totp_enabled ? <Badge tone="green">TOTP</Badge> : null}
                </Td>
                <Td>
                  <Select aria-label={`Role of ${o.email}`} value={o.role} disabled={o.id === me.id || update.isPending} onChange={(e) => update.mutate({ id: o.id, body: { role: e.target.value as Role } })} className="w-32">
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </Select>
                </Td>
                <Td>{o.brand_ids === null ? 'all' : o.brand_ids.map((id) => brands.data?.find((b) => b.id === id)?.name ?? `#${id}`).join(', ')}</Td>
                <Td className="whitespace-nowrap">{time(o.last_login_at)}</Td>
                <Td>
                  {o.id !== me.id ? (
                    <span className="flex flex-wrap gap-2">
                      <Button onClick={() => reset.mutate(o.id)}>Reset password</Button>
                      <Button variant={o.disabled ? 'secondary' : 'danger'} onClick={() => update.mutate({ id: o.id, body: { disabled: !o.disabled } })}>
                        {o.disabled ? 'Enable' : 'Disable'}
                      </Button>
                    </span>
                  ) : (
                    <span className="text-xs text-slate-600">you</span>
                  )}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>

      <Dialog open={addOpen} title="Add operator" onClose={() => setAddOpen(false)}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            // An owner sees every brand whatever the list says; anyone else's list must parse.
            const brands = form.role === 'owner' ? { ok: true as const, ids: null } : parseBrandList(form.brands);
            if (!brands.ok) {
              setBrandsError(brands.error);
              return;
            }
            setBrandsError(null);
            create.mutate(brands.ids);
          }}
        >
          <Field label="E-mail" htmlFor="op-email">
            <Input id="op-email" type="email" required value={form.email} onChange={(e) => setForm({ ...form, email: e.target.value })} />
          </Field>
          <Field label="Name" htmlFor="op-name">
            <Input id="op-name" required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
          </Field>
          <Field label="Role" htmlFor="op-role" hint="viewer reads; operator also decides payments, pairs phones, replays webhooks; owner manages everything.">
            <Select id="op-role" value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value as Role })}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </Select>
          </Field>
          <Field label="Brand ids" htmlFor="op-brands" hint="Comma-separated; empty for every brand.">
            <Input
              id="op-brands"
              value={form.brands}
              onChange={(e) => setForm({ ...form, brands: e.target.value })}
              placeholder="1, 2"
              aria-invalid={brandsError ? true : undefined}
              aria-describedby={brandsError ? 'op-brands-error' : undefined}
            />
            {brandsError ? (
              <p id="op-brands-error" role="alert" className="text-xs text-red-700">
                {brandsError}
              </p>
            ) : null}
          </Field>
          <ErrorBox error={create.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setAddOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={create.isPending}>
              Add operator
            </Button>
          </div>
        </form>
      </Dialog>
      <Dialog open={secret !== null} title="One-time password" onClose={() => setSecret(null)}>
        <div className="flex flex-col gap-3">
          <Notice tone="amber">Hand this password to {secret?.email}; it is shown only now. They should change it after logging in.</Notice>
          <p className="rounded-md bg-slate-100 p-3 font-mono text-sm break-all select-all" data-testid="one-time-password">
            {secret?.password}
          </p>
          <div className="flex justify-end">
            <Button variant="primary" onClick={() => setSecret(null)}>
              Done
            </Button>
          </div>
        </div>
      </Dialog>
    </div>
  );
}
