import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useSession } from '../session.tsx';
import { useBrands } from '../queries.ts';
import type { Mode } from '../mode.tsx';
import type { ApiKeyScope } from '../../../contract/vocabulary.ts';
import { FieldError, invalidProps, unplaced } from '../components/field-error.tsx';
import { BrandLookCard } from './brand-look.tsx';
import { Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, ModeBadge, Notice, PageTitle, Select, StatusBadge, Table, Td, ago, time } from '../components/ui.tsx';

/** The scopes an API key may be limited to, with what each allows (contract/common/meta.ts merchantScopeOf). */
const API_KEY_SCOPES: ReadonlyArray<readonly [ApiKeyScope, string]> = [
  ['read', 'read payments, refunds, customers, links and events'],
  ['write', 'create and cancel payments, payment links and customers'],
  ['refunds', 'ask for refunds'],
  ['webhooks', 'manage webhook endpoints and deliveries'],
];

/** Brands and their API keys; a new key is shown once, in a dialog, and never again. */
export function BrandsScreen() {
  const { can } = useSession();
  const owner = can('own');
  const queryClient = useQueryClient();
  const brands = useBrands();
  const [brandId, setBrandId] = useState<number | null>(null);
  const current = brandId ?? brands.data?.[0]?.id ?? null;
  const [newBrandOpen, setNewBrandOpen] = useState(false);
  const [brandName, setBrandName] = useState('');
  const [keyOpen, setKeyOpen] = useState(false);
  const [keyName, setKeyName] = useState('');
  const [keyMode, setKeyMode] = useState<Mode>('live');
  const [keyDialect, setKeyDialect] = useState<'native' | 'ownpay'>('native');
  // Empty: the key may do everything.
  const [keyScopes, setKeyScopes] = useState<ApiKeyScope[]>([]);
  const [keyExpires, setKeyExpires] = useState('');
  const [created, setCreated] = useState<{ key: string; mode: Mode } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  // Listing keys is an owner's business too (the server's role matrix says so).
  const keys = useQuery({
    queryKey: ['api-keys', current],
    enabled: current !== null && owner,
    queryFn: async () => (await ok(api.brands.listApiKeys({ params: { brand_id: String(current) } }))).data,
  });
  const createBrand = useMutation({
    mutationFn: async () => (await ok(api.brands.create({ body: { name: brandName.trim() } }))).data,
    onSuccess: async (b) => {
      setNewBrandOpen(false);
      setBrandId(b.id);
      setNotice(`Brand ${b.name} created.`);
      await queryClient.invalidateQueries({ queryKey: ['brands'] });
    },
  });
  const createKey = useMutation({
    mutationFn: async () => {
      const body = {
        name: keyName.trim(),
        mode: keyMode,
        dialect: keyDialect,
        ...(keyScopes.length ? { scopes: keyScopes } : {}),
        // The date input's day, to its end in the operator's own time zone.
        ...(keyExpires ? { expires_at: new Date(`${keyExpires}T23:59:59`).toISOString() } : {}),
      };
      return (await ok(api.brands.createApiKey({ params: { brand_id: String(current) }, body }))).data;
    },
    onSuccess: async (k) => {
      setCreated({ key: k.key, mode: k.mode });
      await queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const revokeKey = useMutation({
    mutationFn: async (id: number) => (await ok(api.brands.revokeApiKey({ params: { brand_id: String(current), key_id: String(id) }, body: {} }))).data,
    onSuccess: async (k) => {
      setNotice(`Key ${k.prefix}… revoked.`);
      await queryClient.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const toggleReceipts = useMutation({
    mutationFn: async (v: { id: number; on: boolean }) => (await ok(api.brands.update({ params: { brand_id: String(v.id) }, body: { receipts_enabled: v.on } }))).data,
    onSuccess: async (b) => {
      setNotice(b.receipts_enabled ? `${b.name}'s customers get receipt e-mails from now on.` : `${b.name} sends no more receipts.`);
      await queryClient.invalidateQueries({ queryKey: ['brands'] });
    },
  });
  const toggleBrand = useMutation({
    mutationFn: async (v: { id: number; status: 'active' | 'disabled' }) => (await ok(api.brands.update({ params: { brand_id: String(v.id) }, body: { status: v.status } }))).data,
    onSuccess: async (b) => {
      setNotice(`${b.name} is ${b.status}.`);
      await queryClient.invalidateQueries({ queryKey: ['brands'] });
    },
  });

  return (
    <div>
      <PageTitle
        actions={
          owner ? (
            <Button
              variant="primary"
              onClick={() => {
                setBrandName('');
                setNewBrandOpen(true);
              }}
            >
              New brand
            </Button>
          ) : null
        }
      >
        Brands and API keys
      </PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={brands.error ?? revokeKey.error ?? toggleBrand.error ?? toggleReceipts.error} />
      <div className="grid gap-4 lg:grid-cols-2">
        <Card title="Brands">
          {brands.isPending ? (
            <Loading />
          ) : brands.data?.length === 0 ? (
            <Empty>No brand.</Empty>
          ) : (
            <Table label="Brands" head={['Brand', 'Status', 'Time zone', 'Receipts', '']}>
              {(brands.data ?? []).map((b) => (
                <tr key={b.id} className={b.id === current ? 'bg-indigo-50' : undefined}>
                  <Td>
                    <button type="button" className="text-left font-medium text-indigo-700 underline" onClick={() => setBrandId(b.id)} aria-pressed={b.id === current}>
                      {b.name}
                    </button>
                    <span className="block text-xs text-slate-600">#{b.id}</span>
                  </Td>
                  <Td>
                    <StatusBadge status={b.status} />
                  </Td>
                  <Td>{b.timezone}</Td>
                  <Td>
                    {owner ? (
                      <Button
                        variant="secondary"
                        aria-label={`Receipt e-mails for ${b.name}: ${b.receipts_enabled ? 'on, turn off' : 'off, turn on'}`}
                        onClick={() => toggleReceipts.mutate({ id: b.id, on: !b.receipts_enabled })}
                      >
                        {b.receipts_enabled ? 'On' : 'Off'}
                      </Button>
                    ) : b.receipts_enabled ? (
                      'On'
                    ) : (
                      'Off'
                    )}
                  </Td>
                  <Td>
                    {owner ? (
                      <Button variant={b.status === 'active' ? 'danger' : 'secondary'} onClick={() => toggleBrand.mutate({ id: b.id, status: b.status === 'active' ? 'disabled' : 'active' })}>
                        {b.status === 'active' ? 'Disable' : 'Enable'}
                      </Button>
                    ) : null}
                  </Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
        {owner ? (
        <Card
          title={`API keys${current ? ` of ${brands.data?.find((b) => b.id === current)?.name ?? ''}` : ''}`}
          actions={
            owner && current ? (
              <Button
                onClick={() => {
                  setKeyName('');
                  setKeyScopes([]);
                  setKeyExpires('');
                  setCreated(null);
                  createKey.reset();
                  setKeyOpen(true);
                }}
              >
                New API key
              </Button>
            ) : null
          }
        >
          <ErrorBox error={keys.error} />
          {keys.isPending && current ? (
            <Loading />
          ) : keys.data?.length === 0 ? (
            <Empty>No key.</Empty>
          ) : (
            <Table label="API keys" head={['Key', 'Mode', 'May', 'Created', 'Last used', '']}>
              {(keys.data ?? []).map((k) => (
                <tr key={k.id}>
                  <Td>
                    <span className="font-medium">{k.name}</span>
                    <span className="block font-mono text-xs text-slate-600">{k.prefix}…</span>
                  </Td>
                  <Td>
                    <ModeBadge mode={k.mode} />
                  </Td>
                  <Td>
                    {k.scopes ? k.scopes.join(', ') : 'everything'}
                    {k.expires_at ? <span className="block text-xs text-slate-600">expires {time(k.expires_at)}</span> : null}
                  </Td>
                  <Td className="whitespace-nowrap">
                    {time(k.created_at)}
                    {k.revoked_at ? <span className="block text-xs text-red-800">revoked {time(k.revoked_at)}</span> : null}
                  </Td>
                  <Td className="whitespace-nowrap">{k.last_used_at ? ago(k.last_used_at) : 'never'}</Td>
                  <Td>
                    {owner && !k.revoked_at ? (
                      <Button variant="danger" busy={revokeKey.isPending && revokeKey.variables === k.id} onClick={() => revokeKey.mutate(k.id)}>
                        Revoke
                      </Button>
                    ) : null}
                  </Td>
                </tr>
              ))}
            </Table>
          )}
        </Card>
        ) : null}
      </div>
      {(() => {
        const b = brands.data?.find((x) => x.id === current);
        return b ? <BrandLookCard brand={b} editable={owner} /> : null;
      })()}

      <Dialog open={newBrandOpen} title="New brand" onClose={() => setNewBrandOpen(false)}>
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            if (brandName.trim()) createBrand.mutate();
          }}
        >
          <Field label="Name (shown to paying customers)" htmlFor="brand-name">
            <Input id="brand-name" required maxLength={200} value={brandName} onChange={(e) => setBrandName(e.target.value)} />
          </Field>
          <ErrorBox error={createBrand.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setNewBrandOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={createBrand.isPending} disabled={!brandName.trim()}>
              Create brand
            </Button>
          </div>
        </form>
      </Dialog>

      <Dialog open={keyOpen} title={created ? 'Your new API key' : 'New API key'} onClose={() => setKeyOpen(false)}>
        {created ? (
          <div className="flex flex-col gap-3">
            <Notice tone="amber">Copy it now: it is shown only once, and only its hash is stored.</Notice>
            <p className="rounded-md bg-slate-100 p-3 font-mono text-sm break-all select-all" data-testid="new-api-key">
              {created.key}
            </p>
            <div className="flex justify-end gap-2">
              <Button onClick={() => void navigator.clipboard?.writeText(created.key)}>Copy</Button>
              <Button variant="primary" onClick={() => setKeyOpen(false)}>
                I have stored it
              </Button>
            </div>
          </div>
        ) : (
          <form
            className="flex flex-col gap-3"
            onSubmit={(e) => {
              e.preventDefault();
              if (keyName.trim()) createKey.mutate();
            }}
          >
            <Field label="What the key is for" htmlFor="key-name">
              <Input id="key-name" required maxLength={200} value={keyName} onChange={(e) => setKeyName(e.target.value)} placeholder="shop backend" />
            </Field>
            <Field label="Mode" htmlFor="key-mode" hint="A test key sees and creates only test objects.">
              <Select id="key-mode" value={keyMode} onChange={(e) => setKeyMode(e.target.value as Mode)}>
                <option value="live">live</option>
                <option value="test">test</option>
              </Select>
            </Field>
            <Field label="Spoken by" htmlFor="key-dialect" hint="OwnPay: an op_ key for OwnPay's WooCommerce and WHMCS plugins and SDKs.">
              <Select id="key-dialect" value={keyDialect} onChange={(e) => setKeyDialect(e.target.value as 'native' | 'ownpay')}>
                <option value="native">this service's SDKs (sk_)</option>
                <option value="ownpay">OwnPay plugins and SDKs (op_)</option>
              </Select>
            </Field>
            <fieldset className="flex flex-col gap-1">
              <legend className="text-sm font-medium">May only (none ticked: everything)</legend>
              {API_KEY_SCOPES.map(([scope, what]) => (
                <label key={scope} className="flex items-center gap-2 text-sm">
                  <input
                    type="checkbox"
                    checked={keyScopes.includes(scope)}
                    onChange={(e) => setKeyScopes(e.target.checked ? [...keyScopes, scope] : keyScopes.filter((x) => x !== scope))}
                  />
                  <span>
                    <span className="font-mono">{scope}</span>: {what}
                  </span>
                </label>
              ))}
            </fieldset>
            <Field label="Expires on (optional)" htmlFor="key-expires" hint="After this day the key is refused like a revoked one.">
              <Input id="key-expires" type="date" value={keyExpires} onChange={(e) => setKeyExpires(e.target.value)} {...invalidProps(createKey.error, 'expires_at', 'key-expires')} />
            </Field>
            <FieldError error={createKey.error} field="expires_at" id="key-expires" />
            <ErrorBox error={unplaced(createKey.error, ['expires_at'])} />
            <div className="flex justify-end gap-2">
              <Button onClick={() => setKeyOpen(false)}>Cancel</Button>
              <Button type="submit" variant="primary" busy={createKey.isPending} disabled={!keyName.trim()}>
                Create key
              </Button>
            </div>
          </form>
        )}
      </Dialog>
    </div>
  );
}
