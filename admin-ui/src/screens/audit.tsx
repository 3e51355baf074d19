import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useBrandName } from '../queries.ts';
import { Card, Empty, ErrorBox, Input, Loading, PageTitle, Table, Td, time, count } from '../components/ui.tsx';

function summary(v: Record<string, unknown> | null): string {
  if (!v) return '–';
  return Object.entries(v)
    .map(([k, x]) => `${k}=${Array.isArray(x) ? x.join('|') : String(x)}`)
    .join(' ');
}

export function AuditScreen() {
  const brandName = useBrandName();
  const [action, setAction] = useState('');
  const list = useQuery({
    queryKey: ['audit', action],
    refetchInterval: 15_000,
    queryFn: () => ok(api.auditLog.list({ query: { per_page: '100', ...(action.trim() ? { action: action.trim() } : {}) } })),
  });
  return (
    <div>
      <PageTitle>Audit log</PageTitle>
      <ErrorBox error={list.error} />
      <Card
        title={list.data ? count(list.data.meta.total, 'entry', 'entries') : 'Entries'}
        actions={<Input aria-label="Action" placeholder="action, e.g. transaction.verify" value={action} onChange={(e) => setAction(e.target.value)} className="w-full sm:w-64" />}
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No entry.</Empty>
        ) : (
          <>
            {/* A phone gets one compact card per entry, its change folded away: the table's
                six columns made every entry a narrow, very tall row. */}
            <ol className="-mx-4 divide-y divide-slate-100 md:hidden" aria-label="Audit log entries">
              {(list.data?.data ?? []).map((a) => (
                <li key={a.id} className="px-4 py-2.5 text-sm" data-testid="audit-entry">
                  <div className="flex flex-wrap items-baseline justify-between gap-x-2">
                    <span className="font-mono text-xs font-semibold break-all">{a.action}</span>
                    <time className="text-xs text-slate-600" dateTime={a.created_at}>
                      {time(a.created_at)}
                    </time>
                  </div>
                  <p className="mt-0.5 text-xs break-all text-slate-700">
                    {a.actor} · {a.target_type} {a.target_id ?? ''}
                    {a.brand_id ? ` · ${brandName(a.brand_id)}` : ''}
                  </p>
                  {a.before || a.after ? (
                    <details className="mt-1">
                      <summary className="cursor-pointer text-xs text-indigo-700">Change</summary>
                      <dl className="mt-1 grid grid-cols-[max-content_1fr] gap-x-2 font-mono text-xs break-all">
                        <dt className="text-slate-600">before</dt>
                        <dd>{summary(a.before)}</dd>
                        <dt className="text-slate-600">after</dt>
                        <dd>{summary(a.after)}</dd>
                      </dl>
                    </details>
                  ) : null}
                </li>
              ))}
            </ol>
            <div className="hidden md:block">
              <Table label="Audit log" head={['When', 'Who', 'Action', 'Target', 'Brand', 'Change']}>
                {(list.data?.data ?? []).map((a) => (
                  <tr key={a.id}>
                    <Td className="whitespace-nowrap">{time(a.created_at)}</Td>
                    <Td className="text-xs break-all">{a.actor}</Td>
                    <Td className="font-mono text-xs">{a.action}</Td>
                    <Td className="text-xs">
                      {a.target_type} {a.target_id ?? ''}
                    </Td>
                    <Td>{a.brand_id ? brandName(a.brand_id) : '–'}</Td>
                    <Td className="max-w-96 font-mono text-xs break-words">
                      {summary(a.before)} → {summary(a.after)}
                    </Td>
                  </tr>
                ))}
              </Table>
            </div>
          </>
        )}
      </Card>
    </div>
  );
}
