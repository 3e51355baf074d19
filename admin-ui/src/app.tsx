import { useEffect, useState, type ReactNode } from 'react';
import { useSession, useOperator } from './session.tsx';
import { useMode, useOpenWhereWorkWaits, useWaitingByMode } from './mode.tsx';
import { Link, match, navigate, useLocation } from './router.tsx';
import { Button, Loading, cx } from './components/ui.tsx';
import { LoginScreen } from './screens/login.tsx';
import { OverviewScreen } from './screens/overview.tsx';
import { ReviewScreen } from './screens/review.tsx';
import { PaymentsScreen, PaymentDetailScreen } from './screens/payments.tsx';
import { DevicesScreen } from './screens/devices.tsx';
import { WebhooksScreen } from './screens/webhooks.tsx';
import { RefundsScreen } from './screens/refunds.tsx';
import { InvoicesScreen } from './screens/invoices.tsx';
import { SmsScreen } from './screens/sms.tsx';
import { AuditScreen } from './screens/audit.tsx';
import { BrandsScreen } from './screens/brands.tsx';
import { SettingsScreen } from './screens/settings.tsx';
import { GatewaysScreen } from './screens/gateways.tsx';
import { WalletAccountsScreen } from './screens/wallet-accounts.tsx';
import { CustomersScreen } from './screens/customers.tsx';
import { OperatorsScreen } from './screens/operators.tsx';
import { AccountScreen } from './screens/account.tsx';
import { FilterRulesScreen } from './screens/filter-rules.tsx';
import { ReconciliationScreen } from './screens/reconciliation.tsx';

interface Screen {
  path: string;
  title: string;
  nav?: string;
  /** Listed in the menu for owners only (the server refuses the others anyway). */
  ownerOnly?: boolean;
  render(params: Record<string, string>): ReactNode;
}

const SCREENS: Screen[] = [
  { path: '/', title: 'Overview', nav: 'Overview', render: () => <OverviewScreen /> },
  { path: '/review', title: 'Review queue', nav: 'Review', render: () => <ReviewScreen /> },
  { path: '/payments', title: 'Payments', nav: 'Payments', render: () => <PaymentsScreen /> },
  { path: '/payments/:id', title: 'Payment', render: (p) => <PaymentDetailScreen id={p.id!} /> },
  { path: '/devices', title: 'Devices', nav: 'Devices', render: () => <DevicesScreen /> },
  { path: '/webhooks', title: 'Webhook deliveries', nav: 'Webhooks', render: () => <WebhooksScreen /> },
  { path: '/refunds', title: 'Refunds', nav: 'Refunds', render: () => <RefundsScreen /> },
  { path: '/customers', title: 'Customers', nav: 'Customers', render: () => <CustomersScreen /> },
  { path: '/invoices', title: 'Invoices', nav: 'Invoices', render: () => <InvoicesScreen /> },
  { path: '/sms', title: 'SMS inbox', nav: 'SMS inbox', render: () => <SmsScreen /> },
  { path: '/gateways', title: 'Gateways', nav: 'Gateways', render: () => <GatewaysScreen /> },
  { path: '/wallet-accounts', title: 'Wallet accounts', nav: 'Wallet accounts', render: () => <WalletAccountsScreen /> },
  { path: '/reconciliation', title: 'Statement reconciliation', nav: 'Reconciliation', render: () => <ReconciliationScreen /> },
  { path: '/filter-rules', title: 'SMS filter rules', nav: 'Filter rules', render: () => <FilterRulesScreen /> },
  { path: '/brands', title: 'Brands and API keys', nav: 'Brands & keys', render: () => <BrandsScreen /> },
  { path: '/settings', title: 'Settings', nav: 'Settings', render: () => <SettingsScreen /> },
  { path: '/audit', title: 'Audit log', nav: 'Audit log', render: () => <AuditScreen /> },
  { path: '/operators', title: 'Operators', nav: 'Operators', ownerOnly: true, render: () => <OperatorsScreen /> },
  { path: '/account', title: 'My account', nav: 'My account', render: () => <AccountScreen /> },
];

export function App() {
  const { state } = useSession();
  const { path } = useLocation();
  if (state.status === 'loading') {
    return (
      <main className="mx-auto max-w-md p-6">
        <Loading what="Opening the console" />
      </main>
    );
  }
  if (state.status === 'anonymous') return <LoginScreen notice={state.notice} />;
  let found: { screen: Screen; params: Record<string, string> } | null = null;
  for (const screen of SCREENS) {
    const params = match(screen.path, path);
    if (params) {
      found = { screen, params };
      break;
    }
  }
  return <Layout current={found?.screen.path}>{found ? found.screen.render(found.params) : <NotFound />}</Layout>;
}

function NotFound() {
  return (
    <div className="py-10 text-center">
      <h1 className="text-lg font-semibold">No such screen</h1>
      <p className="mt-2 text-sm text-slate-600">
        <Link to="/" className="text-indigo-700 underline">
          Back to the overview
        </Link>
      </p>
    </div>
  );
}

function Layout({ current, children }: { current: string | undefined; children: ReactNode }) {
  const operator = useOperator();
  const { logout, can } = useSession();
  const { mode, setMode } = useMode();
  const waiting = useWaitingByMode();
  useOpenWhereWorkWaits(waiting);
  const [menuOpen, setMenuOpen] = useState(false);
  const [leaving, setLeaving] = useState(false);
  const { path } = useLocation();
  useEffect(() => setMenuOpen(false), [path]);
  const title = SCREENS.find((s) => s.path === current)?.title;
  useEffect(() => {
    document.title = `${title ?? 'Console'} · Paycollect`;
  }, [title]);
  const nav = SCREENS.filter((s) => s.nav && (!s.ownerOnly || can('own')));

  return (
    <div className="min-h-screen">
      <header className={cx('sticky top-0 z-10 border-b', mode === 'test' ? 'border-violet-300 bg-violet-50' : 'border-slate-200 bg-white')}>
        <div className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-2">
          <Link to="/" className="font-semibold text-slate-900">
            Paycollect <span className="font-normal text-slate-600">console</span>
          </Link>
          <div className="ml-auto flex items-center gap-2">
            <fieldset className="flex overflow-hidden rounded-md ring-1 ring-slate-300" aria-label="Mode">
              <legend className="sr-only">Mode</legend>
              {(['live', 'test'] as const).map((m) => (
                <button
                  key={m}
                  type="button"
                  aria-pressed={mode === m}
                  onClick={() => setMode(m)}
                  data-testid={`mode-${m}`}
                  className={cx('inline-flex items-center gap-1.5 px-2.5 py-1 text-xs font-semibold', mode === m ? (m === 'live' ? 'bg-green-700 text-white' : 'bg-violet-700 text-white') : 'bg-white text-slate-700 hover:bg-slate-100')}
                >
                  <span className="uppercase">{m}</span>
                  {/* What waits for review in that mode, so work in the other mode is never hidden. */}
                  {waiting[m] !== undefined ? (
                    <span className={cx('rounded-full px-1.5 text-[0.7rem] font-semibold', waiting[m]! > 0 ? 'bg-amber-200 text-amber-950' : mode === m ? 'bg-white text-slate-800' : 'bg-slate-200 text-slate-800')}>
                      {waiting[m]}
                      <span className="sr-only"> waiting for review</span>
                    </span>
                  ) : null}
                </button>
              ))}
            </fieldset>
            <button type="button" className="rounded-md px-2 py-1 text-sm ring-1 ring-slate-300 md:hidden" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen((o) => !o)}>
              Menu
            </button>
          </div>
          <div className="flex w-full items-center gap-2 text-sm md:w-auto" data-testid="operator">
            <span className="truncate font-medium" title={operator.email}>
              {operator.name || operator.email}
            </span>
            <span className="rounded bg-slate-200 px-1.5 py-0.5 text-xs font-medium text-slate-800">{operator.role}</span>
            <Button
              variant="ghost"
              className="ml-auto md:ml-0"
              busy={leaving}
              onClick={async () => {
                setLeaving(true);
                await logout();
                navigate('/', { replace: true });
              }}
            >
              Log out
            </Button>
          </div>
        </div>
        {mode === 'test' ? <p className="bg-violet-700 px-4 py-0.5 text-center text-xs font-medium text-white">Test mode: showing test objects only, no money moves</p> : null}
      </header>
      <div className="mx-auto flex max-w-7xl flex-col md:flex-row">
        <nav id="main-nav" aria-label="Main" className={cx('border-b border-slate-200 bg-white md:block md:w-48 md:shrink-0 md:border-r md:border-b-0 md:bg-transparent', menuOpen ? 'block' : 'hidden')}>
          <ul className="flex flex-col p-2">
            {nav.map((s) => (
              <li key={s.path}>
                <Link
                  to={s.path}
                  aria-current={current === s.path ? 'page' : undefined}
                  className={cx('block rounded-md px-3 py-2 text-sm', current === s.path ? 'bg-indigo-50 font-semibold text-indigo-800' : 'text-slate-700 hover:bg-slate-100')}
                >
                  {s.nav}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main className="min-w-0 flex-1 p-4">{children}</main>
      </div>
    </div>
  );
}
