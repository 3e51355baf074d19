import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { Link } from '../router.tsx';
import { PhoneHealth } from '../components/phone-health.tsx';
import { SmsCompleteness, useSmsCompleteness } from '../components/sms-completeness.tsx';
import { BATTERY_LOW_DEFAULT, Badge, BatteryLevel, Card, Empty, ErrorBox, Loading, ModeBadge, PageTitle, StatusBadge, ago, count } from '../components/ui.tsx';

const POLL_MS = 10_000;

/** Per brand, today (in the brand's own time zone): revenue, the review queue, phones and webhook health. */
export function OverviewScreen() {
  const { mode } = useMode();
  const overview = useQuery({
    queryKey: ['overview', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => (await ok(api.overview.get({ query: { mode } }))).data,
  });
  const settings = useQuery({ queryKey: ['settings'], queryFn: async () => (await ok(api.settings.get())).data });
  const lowBattery = settings.data?.battery_low_percent ?? BATTERY_LOW_DEFAULT;
  // Each phone's own battery, signal and heartbeat, beside the brand's counts.
  const devices = useQuery({
    queryKey: ['devices', 'overview', mode],
    refetchInterval: POLL_MS,
    queryFn: async () => (await ok(api.devices.list({ query: { mode, per_page: '100' } }))).data.filter((d) => d.status === 'active'),
  });

  // Per phone: did it miss an SMS in the last 24 hours (its sequence numbers)?
  const completeness = useSmsCompleteness(mode);

  return (
    <div>
      <PageTitle>Overview</PageTitle>
      <ErrorBox error={overview.error ?? devices.error} title="Part of the overview could not be loaded" />
      {overview.isPending ? <Loading /> : null}
      {overview.data?.length === 0 ? (
        <Card>
          <Empty>No brands yet.</Empty>
        </Card>
      ) : null}
      <div className="grid gap-4 md:grid-cols-2">
        {(overview.data ?? []).map((b) => {
          const ds = (devices.data ?? []).filter((d) => d.brand_id === b.brand_id);
          const waiting = b.review.transactions + b.review.sms_records;
          return (
            <Card
              key={b.brand_id}
              title={b.brand_name}
              actions={
                <>
                  {b.brand_status === 'disabled' ? <Badge tone="red">disabled</Badge> : null}
                  <Badge>{`${b.date} ${b.timezone}`}</Badge>
                </>
              }
            >
              <dl className="grid grid-cols-2 gap-3 text-sm">
                <div>
                  <dt className="text-slate-600">Revenue today</dt>
                  <dd className="text-lg font-semibold" data-testid={`revenue-${b.brand_id}`}>
                    {b.revenue.length > 0 ? b.revenue.map((r) => `${r.amount} ${r.currency}`).join(' · ') : '0.00'}
                  </dd>
                  <dd className="text-xs text-slate-600">
                    {b.revenue.reduce((n, r) => n + r.count, 0)} completed · {b.transactions_created} started
                  </dd>
                </div>
                <div>
                  <dt className="text-slate-600">Waiting for review</dt>
                  <dd className="text-lg font-semibold">
                    {waiting > 0 ? (
                      <Link to="/review" className="text-amber-800 underline">
                        {waiting}
                      </Link>
                    ) : (
                      0
                    )}
                  </dd>
                  <dd className="text-xs text-slate-600">
                    {count(b.review.transactions, 'payment')} · {b.review.sms_records} SMS{b.review.oldest_waiting_since ? ` · oldest ${ago(b.review.oldest_waiting_since)}` : ''}
                  </dd>
                </div>
                <div className="col-span-2">
                  <dt className="mb-1 text-slate-600">
                    {mode === 'live' ? 'Live' : 'Test'} phones: {b.devices.online} online, {b.devices.offline} offline{b.devices.low_battery ? `, ${b.devices.low_battery} low on battery` : ''}
                  </dt>
                  <dd>
                    {ds.length === 0 ? (
                      <span className="text-slate-600">no {mode} phone paired</span>
                    ) : (
                      <ul className="flex flex-col gap-1">
                        {ds.map((d) => (
                          <li key={d.id} className="flex flex-wrap items-center gap-2">
                            <StatusBadge status={d.presence} />
                            <ModeBadge mode={d.mode} />
                            <span className="font-medium">{d.name}</span>
                            <span className="text-xs text-slate-600">
                              battery <BatteryLevel level={d.battery_level} charging={d.is_charging} lowAt={lowBattery} /> · {d.network ?? 'network ?'} · heartbeat {ago(d.last_heartbeat_at)}
                            </span>
                            <PhoneHealth device={d} />
                            <SmsCompleteness view={completeness.data?.get(d.id)} />
                          </li>
                        ))}
                      </ul>
                    )}
                  </dd>
                </div>
                <div className="col-span-2">
                  <dt className="text-slate-600">Webhooks</dt>
                  <dd className="flex flex-wrap items-center gap-2">
                    {b.webhooks.dead_letters > 0 ? <Badge tone="red">{count(b.webhooks.dead_letters, 'dead letter')}</Badge> : <Badge tone="green">no dead letters</Badge>}
                    {b.webhooks.retrying > 0 ? <Badge tone="amber">{`${b.webhooks.retrying} retrying`}</Badge> : null}
                    {b.webhooks.endpoints_disabled > 0 ? <Badge tone="red">{`${count(b.webhooks.endpoints_disabled, 'endpoint')} disabled`}</Badge> : null}
                    <span className="text-xs text-slate-600">{b.webhooks.delivered_24h} delivered in 24 h</span>
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
