import { useEffect, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { DevicePresence } from '../../../contract/vocabulary.ts';
import { api, ok } from '../api.ts';
import { useMode, type Mode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrandName, useBrands } from '../queries.ts';
import { QrImage } from '../components/qr.tsx';
import { BackfillPanel } from '../components/backfill.tsx';
import { SmsCompleteness, useSmsCompleteness } from '../components/sms-completeness.tsx';
import { navigate, useLocation } from '../router.tsx';
import { PhoneHealth } from '../components/phone-health.tsx';
import { Button, Card, Dialog, Empty, ErrorBox, Field, Input, Loading, ModeBadge, Notice, PageTitle, Select, StatusBadge, Table, Td, ago, count, time, BatteryLevel, BATTERY_LOW_DEFAULT } from '../components/ui.tsx';

type Pairing = { code: string; expires_at: string; mode: Mode; brand_id: number };

export function DevicesScreen() {
  const { mode } = useMode();
  const { can } = useSession();
  const queryClient = useQueryClient();
  const brandName = useBrandName();
  const [presence, setPresence] = useState<'' | DevicePresence>('');
  const settings = useQuery({ queryKey: ['settings'], queryFn: async () => (await ok(api.settings.get())).data });
  const lowBattery = settings.data?.battery_low_percent ?? BATTERY_LOW_DEFAULT;
  const [revoking, setRevoking] = useState<{ id: number; name: string } | null>(null);
  const [pairOpen, setPairOpen] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [history, setHistory] = useState<{ id: number; name: string } | null>(null);
  // Recovery: the phone whose SMS re-send (backfill) panel is open; `?backfill=<device id>` opens it (a link from the SMS screen).
  const { query } = useLocation();
  const [backfill, setBackfill] = useState<{ id: number; name: string } | null>(null);

  const list = useQuery({
    queryKey: ['devices', mode, presence],
    refetchInterval: 10_000,
    queryFn: () => ok(api.devices.list({ query: { mode, per_page: '100', ...(presence ? { presence } : {}) } })),
  });
  const completeness = useSmsCompleteness(mode);
  const asked = Number(query.get('backfill'));
  const linked = asked ? list.data?.data.find((d) => d.id === asked && d.status === 'active') : undefined;
  useEffect(() => {
    if (!linked) return;
    setBackfill({ id: linked.id, name: linked.name });
    // Opened once: closing the panel must not reopen it.
    navigate('/devices', { replace: true });
  }, [linked]);
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
        title={list.data ? count(list.data.meta.total, 'device') : 'Devices'}
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
          <Table label="Devices" head={['Name', 'Presence', 'SMS (24 h)', 'Battery', 'Signal', 'Last heartbeat', 'Brand', 'Actions']}>
            {(list.data?.data ?? []).map((d) => (
              <tr key={d.id}>
                <Td>
                  <span className="font-medium">{d.name}</span>
                  <span className="block text-xs text-slate-600">
                    #{d.id} · {d.protocol === 'ownpay' ? 'OwnPay app' : 'app'} {d.app_version ?? '?'} · paired {time(d.paired_at)}
                  </span>
                  {d.status === 'active' ? <PhoneHealth device={d} /> : null}
                  {/* In the first column, so a phone-sized screen shows it without scrolling the table sideways. */}
                  <button
                    type="button"
                    aria-label={`Presence history of ${d.name}`}
                    aria-expanded={history?.id === d.id}
                    onClick={() => setHistory(history?.id === d.id ? null : { id: d.id, name: d.name })}
                    className="mt-1 -ml-1 rounded px-1 py-1.5 text-xs font-medium whitespace-nowrap text-indigo-700 underline hover:bg-indigo-50 focus-visible:outline-2 focus-visible:outline-indigo-600"
                  >
                    Presence history
                  </button>
                </Td>
                <Td>
                  <StatusBadge status={d.presence} />
                  {d.revoked_reason ? <span className="block text-xs text-slate-600">{d.revoked_reason}</span> : null}
                </Td>
                <Td>{d.status === 'active' ? <SmsCompleteness view={completeness.data?.get(d.id)} /> : '–'}</Td>
                <Td className="whitespace-nowrap">
                  <BatteryLevel level={d.battery_level} charging={d.is_charging} lowAt={lowBattery} />
                </Td>
                <Td>{d.network ?? '–'}</Td>
                <Td className="whitespace-nowrap">{ago(d.last_heartbeat_at)}</Td>
                <Td>{brandName(d.brand_id)}</Td>
                <Td>
                  {can('operate') && d.status === 'active' ? (
                    <div className="flex flex-wrap gap-2">
                      {/* OwnPay's app does not re-send missed SMS (README "The OwnPay Android app"). */}
                      {d.protocol === 'ownpay' ? null : (
                        <Button aria-label={`Ask ${d.name} to re-send SMS`} aria-expanded={backfill?.id === d.id} onClick={() => setBackfill(backfill?.id === d.id ? null : { id: d.id, name: d.name })}>
                          Re-send SMS
                        </Button>
                      )}
                      <Button variant="danger" onClick={() => setRevoking({ id: d.id, name: d.name })}>
                        Revoke
                      </Button>
                    </div>
                  ) : null}
                </Td>
              </tr>
            ))}
          </Table>
        )}
      </Card>
      {history ? <PresenceHistory key={history.id} device={history} onClose={() => setHistory(null)} /> : null}
      {backfill ? <BackfillPanel key={backfill.id} device={backfill} onClose={() => setBackfill(null)} /> : null}

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
          <div className="flex flex-wrap justify-center gap-4">
            <figure className="flex flex-col items-center gap-1">
              <QrImage text={result.code} label={`QR code of pairing code ${result.code}`} />
              <figcaption className="text-sm text-slate-700">Companion app</figcaption>
            </figure>
            <figure className="flex flex-col items-center gap-1">
              {/* OwnPay's Android app scans {"server_url","otp"} (README "The OwnPay Android app"); the console is served by the service, so its origin is the server URL. */}
              <QrImage text={JSON.stringify({ server_url: window.location.origin, otp: result.code })} label={`OwnPay app QR code of pairing code ${result.code}`} />
              <figcaption className="text-sm text-slate-700">OwnPay app</figcaption>
            </figure>
          </div>
          <p className="font-mono text-2xl font-semibold tracking-wider" data-testid="pairing-code">
            {result.code}
          </p>
          <p className="text-sm text-slate-700">
            Type or scan this code in the companion app, or scan the &ldquo;OwnPay app&rdquo; code with OwnPay&rsquo;s Android app. <ModeBadge mode={result.mode} /> phone, valid until {time(result.expires_at)}, usable once. It is shown only now.
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

const HISTORY_PAGE = 20;

/** When a device went offline and came back, newest first, with its battery and signal then (kept 30 days). */
function PresenceHistory({ device, onClose }: { device: { id: number; name: string }; onClose(): void }) {
  const [page, setPage] = useState(1);
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    panel.current?.focus();
    panel.current?.scrollIntoView({ block: 'nearest' });
  }, []);
  const history = useQuery({
    queryKey: ['presence-history', device.id, page],
    refetchInterval: 30_000,
    placeholderData: (prev) => prev,
    queryFn: () => ok(api.devices.presenceHistory({ params: { device_id: String(device.id) }, query: { page: String(page), per_page: String(HISTORY_PAGE) } })),
  });
  const meta = history.data?.meta;
  return (
    <div ref={panel} tabIndex={-1} role="region" aria-label={`Presence history of ${device.name}`} className="mt-4 outline-none" data-testid="presence-history">
      <Card title={`Presence history of ${device.name}`} actions={<Button onClick={onClose}>Close</Button>}>
        <p className="mb-2 text-xs text-slate-600">Each time the phone went offline or came back online (checked every minute), with its battery and signal at that moment. Kept for 30 days.</p>
        <ErrorBox error={history.error} />
        {history.isPending ? (
          <Loading />
        ) : history.data?.data.length === 0 ? (
          <Empty>No change recorded in the last 30 days.</Empty>
        ) : (
          <Table label="Presence history" head={['Change', 'When', 'Battery', 'Signal', 'Last seen then']}>
            {(history.data?.data ?? []).map((c) => (
              <tr key={c.id}>
                <Td>
                  <StatusBadge status={c.status} />
                </Td>
                <Td className="whitespace-nowrap">{time(c.changed_at)}</Td>
                <Td className="whitespace-nowrap">{c.battery_level == null ? '–' : `${c.battery_level}%${c.is_charging ? ' ⚡' : ''}`}</Td>
                <Td>{c.network ?? '–'}</Td>
                <Td className="whitespace-nowrap">{time(c.last_seen_at)}</Td>
              </tr>
            ))}
          </Table>
        )}
        {meta && meta.total_pages > 1 ? (
          <nav className="mt-3 flex items-center justify-between text-sm" aria-label="Presence history pages">
            <Button disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Newer
            </Button>
            <span>
              Page {page} of {meta.total_pages}
            </span>
            <Button disabled={page >= meta.total_pages} onClick={() => setPage(page + 1)}>
              Older
            </Button>
          </nav>
        ) : null}
      </Card>
    </div>
  );
}
