import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode, type Mode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrandName, useBrands } from '../queries.ts';
import { QrImage } from '../components/qr.tsx';
import { Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, ModeBadge, Notice, PageTitle, Select, StatusBadge, Table, Td, ago, time } from '../components/ui.tsx';

type Pairing = { code: string; expires_at: string; mode: Mode; brand_id: number };

export function DevicesScreen() {
  const { mode } = useMode();
  const { can } = useSession();
  const queryClient = useQueryClient();
  const brandName = useBrandName();
  const [presence, setPresence] = useState<'' | 'online' | 'offline' | 'revoked'>('');
  const [revoking, setRevoking] = useState<{ id: number; name: string } | null>(null);
  const [pairOpen, setPairOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const list = useQuery({
    queryKey: ['devices', mode, presence],
    refetchInterval: 10_000,
    queryFn: () => ok(api.devices.list({ query: { mode, per_page: '100', ...(presence ? { presence } : {}) } })),
  });
  const revoke = useMutation({
    mutationFn: async (id: number) => (await ok(api.devices.revoke({ params: { device_id: String(id) }, body: {} }))).data,
    onSuccess: async (d) => {
      setRevoking(null);
      setNotice(`${d.name} is revoked: its tokens no longer work.`);
      await queryClient.invalidateQueries({ queryKey: ['devices'] });
    },
  });

  return (
    <div>
      <PageTitle
        actions={
          can('operate') ? (
            <Button variant="primary" onClick={() => setPairOpen(true)}>
              Pair a phone
            </Button>
          ) : null
        }
      >
        Devices
      </PageTitle>
      {notice ? <Notice>{notice}</Notice> : null}
      <ErrorBox error={list.error} />
      <Card
        title={list.data ? `${list.data.meta.total} devices` : 'Devices'}
        actions={
          <Select aria-label="Presence" value={presence} onChange={(e) => setPresence(e.target.value as typeof presence)} className="w-36">
            <option value="">any presence</option>
            <option value="online">online</option>
            <option value="offline">offline</option>
            <option value="revoked">revoked</option>
          </Select>
        }
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No {mode} phone is paired. Pair one with a pairing code.</Empty>
        ) : (
          <Table label="Devices" head={['Name', 'Presence', 'Battery', 'Signal', 'Last heartbeat', 'Brand', '']}>
            {(list.data?.data ?? []).map((d) => (
              <tr key={d.id}>
                <Td>
                  <span className="font-medium">{d.name}</span>
                  <span className="block text-xs text-slate-600">
                    #{d.id} · app {d.app_version ?? '?'} · paired {time(d.paired_at)}
                  </span>
                </Td>
                <Td>
                  <StatusBadge status={d.presence} />
                  {d.revoked_reason ? <span className="block text-xs text-slate-600">{d.revoked_reason}</span> : null}
                </Td>
                <Td className="whitespace-nowrap">{d.battery_level == null ? '–' : `${d.battery_level}%${d.is_charging ? ' ⚡' : ''}`}</Td>
                <Td>{d.network ?? '–'}</Td>
                <Td className="whitespace-nowrap">{ago(d.last_heartbeat_at)}</Td>
                <Td>{brandName(d.brand_id)}</Td>
                <Td>
                  {can('operate') && d.status === 'active' ? (
                    <Button variant="danger" onClick={() => setRevoking({ id: d.id, name: d.name })}>
                      Revoke
                    </Button>
                  ) : null}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>

      <Dialog open={revoking !== null} title={`Revoke ${revoking?.name ?? ''}?`} onClose={() => setRevoking(null)}>
        <p className="mb-3 text-sm text-slate-700">The phone stops forwarding SMS at once; it must pair again with a new code.</p>
        <ErrorBox error={revoke.error} />
        <div className="flex justify-end gap-2">
          <Button onClick={() => setRevoking(null)}>Cancel</Button>
          <Button variant="danger" busy={revoke.isPending} onClick={() => revoking && revoke.mutate(revoking.id)}>
            Revoke device
          </Button>
        </div>
      </Dialog>
      <PairDialog open={pairOpen} onClose={() => setPairOpen(false)} />
    </div>
  );
}

function PairDialog({ open, onClose }: { open: boolean; onClose(): void }) {
  const { mode } = useMode();
  const brands = useBrands();
  const [brandId, setBrandId] = useState('');
  const [pairMode, setPairMode] = useState<Mode>(mode);
  const [ttl, setTtl] = useState('15');
  const [result, setResult] = useState<Pairing | null>(null);
  const create = useMutation({
    mutationFn: async () => {
      const brand = brandId || String(brands.data?.[0]?.id ?? '');
      return (await ok(api.pairingCodes.create({ params: { brand_id: brand }, body: { mode: pairMode, ttl_minutes: Number(ttl) } }))).data;
    },
    onSuccess: (p) => setResult(p),
  });
  const close = () => {
    setResult(null);
    create.reset();
    onClose();
  };
  return (
    <Dialog open={open} title="Pair a phone" onClose={close}>
      {result ? (
        <div className="flex flex-col items-center gap-3 text-center">
          <QrImage text={result.code} label={`QR code of pairing code ${result.code}`} />
          <p className="font-mono text-2xl font-semibold tracking-wider" data-testid="pairing-code">
            {result.code}
          </p>
          <p className="text-sm text-slate-700">
            Type or scan this code in the companion app. <ModeBadge mode={result.mode} /> phone, valid until {time(result.expires_at)}, usable once. It is shown only now.
          </p>
          <Button variant="primary" onClick={close}>
            Done
          </Button>
        </div>
      ) : (
        <form
          className="flex flex-col gap-3"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <Field label="Brand" htmlFor="pair-brand">
            <Select id="pair-brand" value={brandId} onChange={(e) => setBrandId(e.target.value)}>
              {(brands.data ?? []).map((b) => (
                <option key={b.id} value={b.id}>
                  {b.name}
                </option>
              ))}
            </Select>
          </Field>
          <Field label="Mode" htmlFor="pair-mode" hint="A test phone verifies only test payments; a live phone only live ones.">
            <Select id="pair-mode" value={pairMode} onChange={(e) => setPairMode(e.target.value as Mode)}>
              <option value="live">live</option>
              <option value="test">test</option>
            </Select>
          </Field>
          <Field label="Valid for (minutes)" htmlFor="pair-ttl">
            <Input id="pair-ttl" type="number" min={1} max={10080} value={ttl} onChange={(e) => setTtl(e.target.value)} />
          </Field>
          <ErrorBox error={create.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={close}>Cancel</Button>
            <Button type="submit" variant="primary" busy={create.isPending} disabled={!brands.data?.length}>
              Create pairing code
            </Button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
