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
        actions={<Input aria-label="Action" placeholder="action, e.g. transaction.verify" value={action} onChange={(e) => setAction(e.target.value)} className="w-64" />}
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No entry.</Empty>
        ) : (
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
        )}
      </Card>
    </div>
  );
}
