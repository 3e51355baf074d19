import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { todayUtc, useBrands } from '../queries.ts';
import { Link } from '../router.tsx';
import { Badge, Card, Empty, ErrorBox, Loading, PageTitle, StatusBadge, addAmounts, ago } from '../components/ui.tsx';

const POLL_MS = 10_000;

/** Today's completed payments summed per brand and currency (decimal strings, exact). */
function useToday(mode: 'live' | 'test') {
  return useQuery({
    queryKey: ['overview', 'today', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => {
      const revenue = new Map<number, Map<string, string>>();
      const counts = new Map<number, number>();
      // Paged through: a busy day has more than one page of 100.
      for (let page = 1; page <= 20; page++) {
        const res = await ok(api.transactions.list({ query: { status: 'completed', mode, from: todayUtc(), per_page: '100', page: String(page) } }));
        for (const tx of res.data) {
          const byCur = revenue.get(tx.brand_id) ?? new Map<string, string>();
          byCur.set(tx.currency, addAmounts(byCur.get(tx.currency) ?? '0.00', tx.amount));
          revenue.set(tx.brand_id, byCur);
          counts.set(tx.brand_id, (counts.get(tx.brand_id) ?? 0) + 1);
        }
        if (page >= res.meta.total_pages) break;
      }
      return { revenue, counts };
    },
  });
}

export function OverviewScreen() {
  const { mode } = useMode();
  const brands = useBrands();
  const today = useToday(mode);
  const waiting = useQuery({
    queryKey: ['overview', 'waiting', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => (await ok(api.transactions.list({ query: { status: 'awaiting_verification', mode, per_page: '100' } }))).data,
  });
  const devices = useQuery({
    queryKey: ['devices', 'overview', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => (await ok(api.devices.list({ query: { mode, per_page: '100' } }))).data.filter((d) => d.status === 'active'),
  });
  const dead = useQuery({
    queryKey: ['overview', 'dead', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => ok(api.webhookDeliveries.list({ query: { mode, status: 'dead_letter', per_page: '100' } })),
  });
  const retrying = useQuery({
    queryKey: ['overview', 'retrying', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => ok(api.webhookDeliveries.list({ query: { mode, status: 'retrying', per_page: '100' } })),
  });

  return (
    <div>
      <PageTitle>Overview</PageTitle>
      <ErrorBox error={brands.error ?? today.error ?? waiting.error ?? devices.error ?? dead.error ?? retrying.error} title="Part of the overview could not be loaded" />
      {brands.isPending ? <Loading /> : null}
      {brands.data?.length === 0 ? (
        <Card>
          <Empty>No brands yet.</Empty>
        </Card>
      ) : null}
      <div className="grid gap-4 md:grid-cols-2">
        {(brands.data ?? []).map((b) => {
          const rev = today.data?.revenue.get(b.id);
          const w = (waiting.data ?? []).filter((t) => t.brand_id === b.id);
          const ds = (devices.data ?? []).filter((d) => d.brand_id === b.id);
          const deadCount = (dead.data?.data ?? []).filter((d) => d.brand_id === b.id).length;
          const retryCount = (retrying.data?.data ?? []).filter((d) => d.brand_id === b.id).length;
          return (
            <Card key={b.id} title={b.name} actions={<Badge>{`#${b.id}`}</Badge>}>
              <dl className="grid grid-cols-2 gap-3 text-sm">
                <div>
                  <dt className="text-slate-600">Revenue today</dt>
                  <dd className="text-lg font-semibold" data-testid={`revenue-${b.id}`}>
                    {rev && rev.size > 0 ? [...rev.entries()].map(([cur, amt]) => `${amt} ${cur}`).join(' · ') : '0.00'}
                  </dd>
                  <dd className="text-xs text-slate-600">{today.data?.counts.get(b.id) ?? 0} completed</dd>
                </div>
                <div>
                  <dt className="text-slate-600">Waiting for review</dt>
                  <dd className="text-lg font-semibold">
                    {w.length > 0 ? (
                      <Link to="/review" className="text-amber-800 underline">
                        {w.length}
                      </Link>
                    ) : (
                      0
                    )}
                  </dd>
                </div>
                <div className="col-span-2">
                  <dt className="mb-1 text-slate-600">Phones</dt>
                  <dd>
                    {ds.length === 0 ? (
                      <span className="text-slate-600">none paired</span>
                    ) : (
                      <ul className="flex flex-col gap-1">
                        {ds.map((d) => (
                          <li key={d.id} className="flex flex-wrap items-center gap-2">
                            <StatusBadge status={d.presence} />
                            <span className="font-medium">{d.name}</span>
                            <span className="text-xs text-slate-600">
                              battery {d.battery_level ?? '?'}%{d.is_charging ? ' (charging)' : ''} · {d.network ?? 'network ?'} · heartbeat {ago(d.last_heartbeat_at)}
                            </span>
                          </li>
                        ))}
                      </ul>
                    )}
                  </dd>
                </div>
                <div className="col-span-2">
                  <dt className="text-slate-600">Webhooks</dt>
                  <dd className="flex flex-wrap gap-2">
                    {deadCount > 0 ? <Badge tone="red">{`${deadCount} dead letters`}</Badge> : <Badge tone="green">no dead letters</Badge>}
                    {retryCount > 0 ? <Badge tone="amber">{`${retryCount} retrying`}</Badge> : null}
                    <Link to="/webhooks" className="text-xs text-indigo-700 underline">
                      deliveries
                    </Link>
                  </dd>
                </div>
              </dl>
            </Card>
          );
        })}
      </div>
    </div>
  );
}
