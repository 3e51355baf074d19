import type { z } from 'zod';
import type { adminTransactionSchema } from '../../../contract/admin/transactions.ts';
import type { adminSmsRecordSchema } from '../../../contract/admin/sms-records.ts';
import { Badge, StatusBadge, cx, money, time } from '../components/ui.tsx';

export type Tx = z.output<typeof adminTransactionSchema>;
export type Sms = z.output<typeof adminSmsRecordSchema>;
type BalanceChainState = NonNullable<Sms['balance_chain']['state']>;

type Check = 'same' | 'differs' | 'unknown';
function compare(a: string | null | undefined, b: string | null | undefined, norm = (s: string) => s.trim().toUpperCase()): Check {
  if (!a || !b) return 'unknown';
  return norm(a) === norm(b) ? 'same' : 'differs';
}
function CheckMark({ check }: { check: Check }) {
  if (check === 'same') return <Badge tone="green">agrees</Badge>;
  if (check === 'differs') return <Badge tone="red">differs</Badge>;
  return <Badge>–</Badge>;
}

const CHAIN: Record<BalanceChainState, { text: string; tone: 'green' | 'amber' | 'red' | 'gray' }> = {
  first: { text: 'first balance seen on this phone', tone: 'gray' },
  follows: { text: 'follows the previous balance', tone: 'green' },
  repaired: { text: 'follows a message that arrived later and filled the gap', tone: 'green' },
  after_break: { text: 'follows, but the chain broke before it and is not repaired: check the wallet', tone: 'amber' },
  mismatch: { text: 'contradicts the previous balance', tone: 'red' },
  impossible: { text: 'lower than the credit itself', tone: 'red' },
  unreadable: { text: 'balance not readable', tone: 'amber' },
  missing: { text: "no balance, though this wallet's messages carry one", tone: 'amber' },
};

/**
 * What the payment claims beside what the SMS says, field by field, with the
 * matcher's reason and the phone's balance chain: what a person needs to decide.
 */
export function Evidence({ tx, sms }: { tx: Tx | null; sms: Sms | null }) {
  const rows: Array<{ label: string; claim: string; sms: string; check?: Check }> = [
    { label: 'Amount', claim: tx ? money(tx.amount, tx.currency) : '–', sms: money(sms?.parsed_amount), check: compare(tx?.amount, sms?.parsed_amount, (s) => Number(s).toFixed(2)) },
    { label: 'Gateway trx id', claim: tx?.gateway_trx_id ?? 'none given', sms: sms?.parsed_trx_id ?? '–', check: compare(tx?.gateway_trx_id, sms?.parsed_trx_id) },
    { label: 'Gateway', claim: tx?.gateway ?? '–', sms: sms?.gateway ?? '–', check: compare(tx?.gateway, sms?.gateway, (s) => s) },
    { label: 'Time', claim: time(tx?.created_at), sms: time(sms?.sms_time ?? sms?.received_at) },
  ];
  const chain = sms?.balance_chain.state ? CHAIN[sms.balance_chain.state] : null;
  return (
    <div className="grid gap-4 xl:grid-cols-2">
      <div className="min-w-0">
        <h3 className="mb-2 text-sm font-semibold">Payment against SMS</h3>
        <div className="-mx-4 overflow-x-auto sm:mx-0">
          <table className="min-w-full text-sm" aria-label="Payment against SMS">
            <thead className="text-xs text-slate-600 uppercase">
              <tr>
                <th scope="col" className="px-2 py-1 text-left font-medium">Field</th>
                <th scope="col" className="px-2 py-1 text-left font-medium">Payment claims</th>
                <th scope="col" className="px-2 py-1 text-left font-medium">SMS says</th>
                <th scope="col" className="px-2 py-1 text-left font-medium">Check</th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {rows.map((r) => (
                <tr key={r.label}>
                  <th scope="row" className="px-2 py-1.5 text-left font-medium text-slate-700">{r.label}</th>
                  <td className="px-2 py-1.5 font-mono text-xs break-all">{r.claim}</td>
                  <td className="px-2 py-1.5 font-mono text-xs break-all">{r.sms}</td>
                  <td className="px-2 py-1.5">{r.check ? <CheckMark check={r.check} /> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {tx ? (
          <p className="mt-2 text-xs text-slate-600">
            Payment {tx.trx_id} · reference {tx.reference ?? '–'} · <StatusBadge status={tx.status} />
          </p>
        ) : null}
      </div>
      <div className="min-w-0">
        <h3 className="mb-2 text-sm font-semibold">SMS {sms ? `#${sms.id}` : ''}</h3>
        {sms ? (
          <>
            {sms.body !== undefined ? (
              <blockquote className="mb-2 rounded-md bg-slate-100 p-3 font-mono text-xs break-words whitespace-pre-wrap text-slate-900" data-testid="sms-body">
                {sms.body}
              </blockquote>
            ) : null}
            <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-1 text-sm">
              <dt className="text-slate-600">Sender</dt>
              <dd>{sms.sender}</dd>
              <dt className="text-slate-600">Status</dt>
              <dd>
                <StatusBadge status={sms.match_status} />
              </dd>
              <dt className="text-slate-600">Reason</dt>
              <dd>
                {sms.reason_code ? <code className="mr-1 rounded bg-amber-50 px-1 text-xs text-amber-900">{sms.reason_code}</code> : null}
                {sms.reason ?? '–'}
              </dd>
              <dt className="text-slate-600">Payer number</dt>
              <dd className="font-mono text-xs">{sms.parsed_sender_number ?? '–'}</dd>
              <dt className="text-slate-600">Balance</dt>
              <dd>
                {money(sms.parsed_balance)}
                {chain ? (
                  <span className={cx('ml-2')}>
                    <Badge tone={chain.tone}>{chain.text}</Badge>
                  </span>
                ) : null}
                {sms.balance_chain.expected_balance ? <span className="block text-xs text-slate-600">expected {sms.balance_chain.expected_balance}</span> : null}
              </dd>
              <dt className="text-slate-600">Fee</dt>
              <dd>{money(sms.parsed_fee)}</dd>
              <dt className="text-slate-600">Device</dt>
              <dd>
                #{sms.device_id} · received {time(sms.server_received_at)}
              </dd>
            </dl>
          </>
        ) : (
          <p className="text-sm text-slate-600">No SMS chosen.</p>
        )}
      </div>
    </div>
  );
}
