import { Fragment, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { useBrandName } from '../queries.ts';
import { useSession } from '../session.tsx';
import { useLocation } from '../router.tsx';
import { PasteSmsForm } from '../components/paste-sms.tsx';
import { Button, Card, Empty, ErrorBox, Loading, PageTitle, Select, StatusBadge, Table, Td, money, time } from '../components/ui.tsx';

const STATUSES = ['pending', 'matched', 'no_match', 'no_candidate', 'low_confidence', 'duplicate', 'balance_mismatch', 'money_out'] as const;

/** Forwarded SMS as parsed data; the text itself is read one record at a time (each read is audited). */
export function SmsScreen() {
  const { mode } = useMode();
  const brandName = useBrandName();
  const [status, setStatus] = useState<'' | (typeof STATUSES)[number]>('');
  const [device, setDevice] = useState('');
  const [open, setOpen] = useState<number | null>(null);
  const { can } = useSession();
  // `?paste=1&device=<id>` opens the paste form (a link from a payment waiting for its SMS, or from a device).
  const { query } = useLocation();
  const [pasting, setPasting] = useState(query.get('paste') === '1');

  const devices = useQuery({
    queryKey: ['devices', mode, 'all'],
    queryFn: async () => (await ok(api.devices.list({ query: { mode, per_page: '100' } }))).data,
  });
  const list = useQuery({
    queryKey: ['sms', mode, status, device],
    refetchInterval: 10_000,
    queryFn: () => ok(api.smsRecords.list({ query: { mode, per_page: '100', ...(status ? { match_status: status } : {}), ...(device ? { device_id: device } : {}) } })),
  });
  const body = useQuery({
    queryKey: ['sms', open, 'body'],
    enabled: open !== null,
    queryFn: async () => (await ok(api.smsRecords.get({ params: { sms_record_id: String(open) }, query: { include: 'body' } }))).data,
  });

  return (
    <div>
      <PageTitle
        actions={
          can('operate') ? (
            <Button variant="primary" aria-expanded={pasting} onClick={() => setPasting(!pasting)}>
              Paste a missed SMS
            </Button>
          ) : null
        }
      >
        SMS inbox
      </PageTitle>
      {pasting ? <PasteSmsForm deviceId={query.get('device') ?? undefined} onClose={() => setPasting(false)} /> : null}
      <ErrorBox error={list.error ?? devices.error} />
      <Card
        title={list.data ? `${list.data.meta.total} SMS` : 'SMS'}
        actions={
          <>
            <Select aria-label="Match status" value={status} onChange={(e) => setStatus(e.target.value as typeof status)} className="w-44">
              <option value="">any status</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.replace(/_/g, ' ')}
                </option>
              ))}
            </Select>
            <Select aria-label="Device" value={device} onChange={(e) => setDevice(e.target.value)} className="w-44">
              <option value="">every device</option>
              {(devices.data ?? []).map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name} (#{d.id})
                </option>
              ))}
            </Select>
          </>
        }
      >
        {list.isPending ? (
          <Loading />
        ) : list.data?.data.length === 0 ? (
          <Empty>No SMS.</Empty>
        ) : (
          <Table label="SMS records" head={['SMS', 'Status', 'Amount', 'Trx id', 'Reason', 'Brand', 'Received', 'Text']}>
            {(list.data?.data ?? []).map((s) => (
              <Fragment key={s.id}>
                <tr>
                  <Td>
                    #{s.id} <span className="text-xs text-slate-600">{s.sender ?? 'text expired'}</span>
                  </Td>
                  <Td>
                    <StatusBadge status={s.match_status} />
                  </Td>
                  <Td className="whitespace-nowrap">{money(s.parsed_amount)}</Td>
                  <Td className="font-mono text-xs">{s.parsed_trx_id ?? '–'}</Td>
                  <Td className="text-xs">{s.reason_code ?? '–'}</Td>
                  <Td>{brandName(s.brand_id)}</Td>
                  <Td className="whitespace-nowrap">{time(s.server_received_at)}</Td>
                  <Td>
                    <Button variant="ghost" aria-expanded={open === s.id} onClick={() => setOpen(open === s.id ? null : s.id)}>
                      {open === s.id ? 'Hide text' : 'Show text'}
                    </Button>
                  </Td>
                </tr>
                {open === s.id ? (
                  <tr>
                    <td colSpan={8} className="bg-slate-50 px-4 py-2">
                      {body.isPending ? <Loading /> : <ErrorBox error={body.error} />}
                      {body.data ? <p className="font-mono text-xs break-words whitespace-pre-wrap">{body.data.body}</p> : null}
                    </td>
                  </tr>
                ) : null}
              </Fragment>
            ))}
          </Table>
        )}
      </Card>
    </div>
  );
}
