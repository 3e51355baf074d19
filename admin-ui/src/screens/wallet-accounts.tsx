import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { z } from 'zod';
import type { walletAccountSchema } from '../../../contract/admin/wallet-accounts.ts';
import { walletAccountTypes, type WalletAccountType } from '../../../contract/vocabulary.ts';
import { api, ok } from '../api.ts';
import { useSession } from '../session.tsx';
import { useBrands } from '../queries.ts';
import { Badge, Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, Notice, PageTitle, Select, Table, Td, ago, count } from '../components/ui.tsx';
import { FieldError, groupedAmount, invalidProps, unplaced } from '../components/field-error.tsx';

type Account = z.output<typeof walletAccountSchema>;
type Phone = { id: number; name: string; status: string; mode: string };

const TYPE_WORDS: Record<WalletAccountType, string> = {
  personal: 'personal (Send Money)',
  agent: 'agent (Cash Out)',
  merchant: 'merchant (Payment)',
};
const FIELDS = ['gateway', 'number', 'account_type', 'label', 'daily_limit', 'enabled', 'device_id', 'sim_slot'] as const;
/** SIM slots offered by the form: dual-SIM phones are the norm; a stored higher slot is added to the choice. */
const SLOTS = [0, 1, 2, 3];
const simName = (slot: number) => `SIM ${slot + 1} (slot ${slot})`;

/**
 * A brand's own receiving accounts on the manual gateways: the numbers its
 * checkout shows (round robin among the enabled ones with room in their daily
 * limit, the same one for the whole payment), each optionally bound to the
 * phone and SIM slot whose SMS prove payments into it. Owners change them;
 * operators and viewers read them.
 */
export function WalletAccountsScreen() {
  const brands = useBrands();
  const { can } = useSession();
  const owner = can('own');
  const queryClient = useQueryClient();
  const [brandId, setBrandId] = useState('');
  const current = brandId || String(brands.data?.[0]?.id ?? '');
  const [editing, setEditing] = useState<Account | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Account | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const accounts = useQuery({
    queryKey: ['wallet-accounts', current],
    enabled: !!current,
    queryFn: async () => (await ok(api.walletAccounts.list({ params: { brand_id: current }, query: {} }))).data,
  });
  const gateways = useQuery({ queryKey: ['gateways'], queryFn: async () => (await ok(api.gateways.list())).data });
  const phones = useQuery({
    queryKey: ['devices', 'of-brand', current],
    enabled: !!current,
    queryFn: async () => (await ok(api.devices.list({ query: { brand_id: current, per_page: '100' } }))).data as Phone[],
  });
  const phoneName = (id: number | null) => (id === null ? null : (phones.data?.find((p) => p.id === id)?.name ?? `Phone #${id}`));
  const gatewayName = (code: string) => gateways.data?.find((g) => g.code === code)?.name ?? code;
  const label = (a: Account) => a.label ?? a.number;

  const refresh = () => queryClient.invalidateQueries({ queryKey: ['wallet-accounts', current] });
  const toggle = useMutation({
    mutationFn: async (a: Account) => (await ok(api.walletAccounts.update({ params: { account_id: String(a.id) }, body: { enabled: !a.enabled } }))).data,
    onSuccess: async (a) => {
      setNotice(`${label(a)} is ${a.enabled ? 'enabled: the checkout offers it again' : 'disabled: no new payment is shown it'}.`);
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: async (a: Account) => {
      await ok(api.walletAccounts.delete({ params: { account_id: String(a.id) }, body: {} }));
      return a;
    },
    onSuccess: async (a) => {
      setDeleting(null);
      setNotice(`${label(a)} is deleted.`);
      await refresh();
    },
  });

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
            {owner ? (
              <Button variant="primary" disabled={!current} onClick={() => setEditing('new')}>
                Add account
              </Button>
            ) : null}
          </div>
        }
      >
        Wallet accounts
      </PageTitle>
      <p className="mb-3 max-w-3xl text-sm text-slate-700">
        The brand&rsquo;s own numbers on the manual gateways. Each payment is shown one of them (the enabled accounts with room in their daily limit take turns; a payment keeps the one it was shown).
        An account bound to a phone and SIM is proved only by SMS from that phone and SIM. A gateway with no account of the brand shows the gateway&rsquo;s own number.
      </p>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={brands.error ?? accounts.error ?? toggle.error} />
      {!owner ? <p className="mb-2 text-sm text-slate-600">Only an owner can add or change wallet accounts.</p> : null}
      <Card title={accounts.data ? count(accounts.data.length, 'account') : 'Accounts'}>
        {accounts.isPending && current ? (
          <Loading />
        ) : (accounts.data ?? []).length === 0 ? (
          <Empty>This brand has no wallet account: its checkout shows each gateway&rsquo;s own number.</Empty>
        ) : (
          <Table label="Wallet accounts" head={['Account', 'Type', 'Phone and SIM', 'Today', 'Status', 'Last shown', ...(owner ? [''] : [])]}>
            {(accounts.data ?? []).map((a) => (
              <tr key={a.id} data-testid={`wallet-account-${a.id}`}>
                <Td>
                  <span className="font-mono font-medium whitespace-nowrap">{a.number}</span>
                  <span className="block text-xs text-slate-600">
                    {gatewayName(a.gateway)}
                    {a.label ? ` · ${a.label}` : ''}
                  </span>
                </Td>
                <Td className="whitespace-nowrap">{a.account_type}</Td>
                <Td>
                  {a.device_id === null ? (
                    <span className="text-slate-600">any phone</span>
                  ) : (
                    <>
                      <span className="font-medium">{phoneName(a.device_id)}</span>
                      <span className="block text-xs text-slate-600">{a.sim_slot === null ? 'any SIM' : simName(a.sim_slot)}</span>
                    </>
                  )}
                </Td>
                <Td className="whitespace-nowrap">
                  {groupedAmount(a.used_today)}
                  <span className="block text-xs text-slate-600">{a.daily_limit === null ? 'no daily limit' : `of ${groupedAmount(a.daily_limit)}`}</span>
                </Td>
                <Td>{a.enabled ? <Badge tone="green">enabled</Badge> : <Badge>disabled</Badge>}</Td>
                <Td className="whitespace-nowrap">{a.last_assigned_at ? ago(a.last_assigned_at) : 'never'}</Td>
                {owner ? (
                  <Td>
                    <div className="flex flex-wrap gap-2">
                      <Button aria-label={`Edit ${a.number}`} onClick={() => setEditing(a)}>
                        Edit
                      </Button>
                      <Button aria-label={`${a.enabled ? 'Disable' : 'Enable'} ${a.number}`} busy={toggle.isPending && toggle.variables?.id === a.id} onClick={() => toggle.mutate(a)}>
                        {a.enabled ? 'Disable' : 'Enable'}
                      </Button>
                      <Button
                        variant="danger"
                        aria-label={`Delete ${a.number}`}
                        onClick={() => {
                          remove.reset();
                          setDeleting(a);
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
      </Card>

      {editing && current ? (
        <AccountDialog
          key={editing === 'new' ? 'new' : editing.id}
          brandId={current}
          account={editing === 'new' ? null : editing}
          gateways={(gateways.data ?? []).filter((g) => g.type === 'manual').map((g) => ({ code: g.code, name: g.name }))}
          phones={(phones.data ?? []).filter((p) => p.status === 'active')}
          onClose={() => setEditing(null)}
          onSaved={async (a, created) => {
            setEditing(null);
            setNotice(`${label(a)} ${created ? 'is added' : 'is saved'}.`);
            await refresh();
          }}
        />
      ) : null}

      <Dialog open={deleting !== null} title={`Delete ${deleting?.number ?? ''}?`} onClose={() => setDeleting(null)}>
        <p className="mb-3 text-sm text-slate-700">The checkout stops offering it at once. An account payments were made into cannot be deleted: disable it instead.</p>
        <ErrorBox error={remove.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setDeleting(null)}>Cancel</Button>
          <Button variant="danger" busy={remove.isPending} onClick={() => deleting && remove.mutate(deleting)}>
            Delete account
          </Button>
        </div>
      </Dialog>
    </div>
  );
}

function AccountDialog({
  brandId,
  account,
  gateways,
  phones,
  onClose,
  onSaved,
}: {
  brandId: string;
  account: Account | null;
  gateways: Array<{ code: string; name: string }>;
  phones: Phone[];
  onClose(): void;
  onSaved(a: Account, created: boolean): void;
}) {
  const [form, setForm] = useState({
    gateway: account?.gateway ?? gateways[0]?.code ?? '',
    number: account?.number ?? '',
    account_type: account?.account_type ?? ('personal' as WalletAccountType),
    label: account?.label ?? '',
    daily_limit: account?.daily_limit ?? '',
    enabled: account?.enabled ?? true,
    device_id: account?.device_id === null || account?.device_id === undefined ? '' : String(account.device_id),
    sim_slot: account?.sim_slot === null || account?.sim_slot === undefined ? '' : String(account.sim_slot),
  });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));
  const fields = () => ({
    number: form.number.trim(),
    account_type: form.account_type,
    label: form.label.trim() || null,
    daily_limit: form.daily_limit.trim() || null,
    enabled: form.enabled,
    device_id: form.device_id ? Number(form.device_id) : null,
    sim_slot: form.device_id && form.sim_slot !== '' ? Number(form.sim_slot) : null,
  });
  const save = useMutation({
    mutationFn: async () =>
      account
        ? (await ok(api.walletAccounts.update({ params: { account_id: String(account.id) }, body: fields() }))).data
        : (await ok(api.walletAccounts.create({ params: { brand_id: brandId }, body: { gateway: form.gateway, ...fields() } }))).data,
    onSuccess: (a) => onSaved(a, account === null),
  });
  // A phone bound before may be revoked or of the other mode since: keep it listed, so the form shows the truth.
  const bound = account?.device_id != null && !phones.some((p) => p.id === account.device_id) ? [{ id: account.device_id, name: `Phone #${account.device_id} (not active)` }] : [];
  const slots = form.sim_slot !== '' && !SLOTS.includes(Number(form.sim_slot)) ? [...SLOTS, Number(form.sim_slot)] : SLOTS;
  const e = save.error;

  return (
    <Dialog open title={account ? `Edit ${account.number}` : 'Add a wallet account'} onClose={onClose}>
      <form
        className="flex flex-col gap-3"
        noValidate
        onSubmit={(ev) => {
          ev.preventDefault();
          save.mutate();
        }}
      >
        {account ? (
          <p className="text-sm text-slate-700">
            Gateway: <span className="font-medium">{gateways.find((g) => g.code === account.gateway)?.name ?? account.gateway}</span>
          </p>
        ) : (
          <Field label="Gateway" htmlFor="wa-gateway" hint="Manual gateways only: the checkout shows the number, the phone proves the payment.">
            <Select id="wa-gateway" value={form.gateway} onChange={set('gateway')} {...invalidProps(e, 'gateway', 'wa-gateway')}>
              {gateways.map((g) => (
                <option key={g.code} value={g.code}>
                  {g.name} ({g.code})
                </option>
              ))}
            </Select>
            <FieldError error={e} field="gateway" id="wa-gateway" />
          </Field>
        )}
        <Field label="Wallet number" htmlFor="wa-number" hint="As customers type it, e.g. 01712345678.">
          <Input id="wa-number" inputMode="tel" autoComplete="off" value={form.number} onChange={set('number')} {...invalidProps(e, 'number', 'wa-number')} />
          <FieldError error={e} field="number" id="wa-number" />
        </Field>
        <Field label="Account type" htmlFor="wa-type" hint="What the customer does to pay it.">
          <Select id="wa-type" value={form.account_type} onChange={set('account_type')} {...invalidProps(e, 'account_type', 'wa-type')}>
            {walletAccountTypes.map((t) => (
              <option key={t} value={t}>
                {TYPE_WORDS[t]}
              </option>
            ))}
          </Select>
          <FieldError error={e} field="account_type" id="wa-type" />
        </Field>
        <Field label="Label" htmlFor="wa-label" hint="For operators only; customers never see it.">
          <Input id="wa-label" value={form.label} onChange={set('label')} {...invalidProps(e, 'label', 'wa-label')} />
          <FieldError error={e} field="label" id="wa-label" />
        </Field>
        <Field label="Daily limit" htmlFor="wa-limit" hint={'Two decimals, e.g. 25000.00; empty: no limit. When reached, the next account takes payments.'}>
          <Input id="wa-limit" inputMode="decimal" value={form.daily_limit} onChange={set('daily_limit')} {...invalidProps(e, 'daily_limit', 'wa-limit')} />
          <FieldError error={e} field="daily_limit" id="wa-limit" />
        </Field>
        <Field label="Phone" htmlFor="wa-phone" hint="The phone that receives this account's SMS. Any phone: any of the brand's phones proves it.">
          <Select
            id="wa-phone"
            value={form.device_id}
            onChange={(ev) => setForm((f) => ({ ...f, device_id: ev.target.value, sim_slot: ev.target.value ? f.sim_slot : '' }))}
            {...invalidProps(e, 'device_id', 'wa-phone')}
          >
            <option value="">any phone</option>
            {[...phones, ...bound].map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </Select>
          <FieldError error={e} field="device_id" id="wa-phone" />
        </Field>
        <Field label="SIM slot" htmlFor="wa-sim" hint="The slot holding this account's SIM; needs a phone.">
          <Select id="wa-sim" value={form.sim_slot} onChange={set('sim_slot')} disabled={!form.device_id} {...invalidProps(e, 'sim_slot', 'wa-sim')}>
            <option value="">any SIM</option>
            {slots.map((s) => (
              <option key={s} value={s}>
                {simName(s)}
              </option>
            ))}
          </Select>
          <FieldError error={e} field="sim_slot" id="wa-sim" />
        </Field>
        <Field label="Offered at checkout" htmlFor="wa-enabled">
          <Select id="wa-enabled" value={form.enabled ? 'yes' : 'no'} onChange={(ev) => setForm((f) => ({ ...f, enabled: ev.target.value === 'yes' }))}>
            <option value="yes">enabled</option>
            <option value="no">disabled</option>
          </Select>
        </Field>
        <ErrorBox error={unplaced(e, FIELDS)} />
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={save.isPending} disabled={!account && gateways.length === 0}>
            {account ? 'Save account' : 'Add account'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
