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

/**
 * Payer numbers as the admin API shows them: all but the last three digits
 * masked, so only those three can be compared.
 */
function lastDigits(n: string): string | null {
  const d = n.replace(/\D/g, '');
  return d.length >= 3 ? d.slice(-3) : null;
}
function comparePayer(a: string | null | undefined, b: string | null | undefined): Check {
  const x = a ? lastDigits(a) : null;
  const y = b ? lastDigits(b) : null;
  if (!x || !y) return 'unknown';
  return x === y ? 'same' : 'differs';
}
const sameAmount = (s: string) => Number(s).toFixed(2);

const CHAIN: Record<BalanceChainState, { text: string; tone: 'green' | 'amber' | 'red' | 'gray' }> = {
  first: { text: 'first balance seen on this phone', tone: 'gray' },
  follows: { text: 'follows the previous balance', tone: 'green' },
  repaired: { text: 'follows a message that arrived later and filled the gap', tone: 'green' },
  after_break: { text: 'follows, but the chain broke before it and is not repaired: check the wallet', tone: 'amber' },
  mismatch: { text: 'contradicts the previous balance', tone: 'red' },
  impossible: { text: 'lower than the credit itself', tone: 'red' },
  unreadable: { text: 'balance not readable', tone: 'amber' },
  missing: { text: "no balance, though this wallet's messages carry one", tone: 'amber' },
  new_sim: { text: "first balance on this SIM, while the phone's other SIM has this wallet's chain and no account names this SIM: check the wallet", tone: 'amber' },
};

/** A state of the phone's balance chain that a person must look past to verify. */
const UNTRUSTED_CHAIN: ReadonlySet<BalanceChainState> = new Set(['after_break', 'mismatch', 'impossible', 'unreadable', 'missing', 'new_sim']);

export type DifferenceField = 'amount' | 'trx_id' | 'gateway' | 'payer' | 'balance' | 'reason';

/** The matcher's reasons that say the SMS contradicts the payment in a way the field comparison does not show. */
const CONTRADICTING_REASONS: ReadonlySet<string> = new Set(['payer_is_another_customer', 'dated_before_payment', 'outside_window', 'trx_id_contradicted']);
export interface Difference {
  field: DifferenceField;
  text: string;
}

/**
 * Every check of the comparison that differs, in words: what a person confirms
 * before verifying with this SMS (the review screen's confirmation lists them).
 */
export function differences(tx: Tx, sms: Sms): Difference[] {
  const out: Difference[] = [];
  if (compare(tx.amount, sms.parsed_amount, sameAmount) === 'differs') {
    out.push({ field: 'amount', text: `Amount: the payment is ${money(tx.amount, tx.currency)}, the SMS says ${money(sms.parsed_amount)}` });
  }
  if (compare(tx.gateway_trx_id, sms.parsed_trx_id) === 'differs') {
    out.push({ field: 'trx_id', text: `Trx id: the customer claimed ${tx.gateway_trx_id}, the SMS says ${sms.parsed_trx_id}` });
  }
  if (compare(tx.gateway, sms.gateway, (s) => s) === 'differs') out.push({ field: 'gateway', text: `Gateway: the payment is on ${tx.gateway}, the SMS came from ${sms.gateway}` });
  if (comparePayer(tx.sender_number, sms.parsed_sender_number) === 'differs') {
    out.push({ field: 'payer', text: `Payer number: the customer declared ${tx.sender_number}, the SMS names ${sms.parsed_sender_number}` });
  }
  const state = sms.balance_chain.state;
  if (state && UNTRUSTED_CHAIN.has(state)) out.push({ field: 'balance', text: `Balance: ${CHAIN[state].text}` });
  if (sms.reason_code && CONTRADICTING_REASONS.has(sms.reason_code)) out.push({ field: 'reason', text: `Matcher: ${sms.reason ?? sms.reason_code}` });
  return out;
}

/**
 * What the payment claims beside what the SMS says, field by field, with the
 * matcher's reason and the phone's balance chain: what a person needs to decide.
 */
export function Evidence({ tx, sms }: { tx: Tx | null; sms: Sms | null }) {
  const rows: Array<{ label: string; claim: string; sms: string; check?: Check }> = [
    { label: 'Amount', claim: tx ? money(tx.amount, tx.currency) : '–', sms: money(sms?.parsed_amount), check: compare(tx?.amount, sms?.parsed_amount, sameAmount) },
    { label: 'Gateway trx id', claim: tx?.gateway_trx_id ?? 'none given', sms: sms?.parsed_trx_id ?? '–', check: compare(tx?.gateway_trx_id, sms?.parsed_trx_id) },
    { label: 'Gateway', claim: tx?.gateway ?? '–', sms: sms?.gateway ?? '–', check: compare(tx?.gateway, sms?.gateway, (s) => s) },
    { label: 'Payer number', claim: tx ? (tx.sender_number ?? 'none declared') : '–', sms: sms?.parsed_sender_number ?? '–', check: comparePayer(tx?.sender_number, sms?.parsed_sender_number) },
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
                  <td className="px-2 py-1.5 font-mono text-xs break-words">{r.claim}</td>
                  <td className="px-2 py-1.5 font-mono text-xs break-words">{r.sms}</td>
                  <td className="px-2 py-1.5">{r.check ? <CheckMark check={r.check} /> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {tx ? (
          <p className="mt-2 text-xs text-slate-600">
            Payment {tx.trx_id} · reference {tx.reference ?? '–'} · payer {tx.sender_number ?? 'not declared'} · <StatusBadge status={tx.status} />
          </p>
        ) : null}
      </div>
      <div className="min-w-0">
        <h3 className="mb-2 text-sm font-semibold">SMS {sms ? `#${sms.id}` : ''}</h3>
        {sms ? (
          <>
            {sms.text_expired_at !== null ? (
              <p className="mb-2 rounded-md bg-slate-100 p-3 text-xs text-slate-700" data-testid="sms-text-expired">
                Text expired {time(sms.text_expired_at)}: the sender and the text were dropped after the retention period; the parsed evidence below stays.
              </p>
            ) : null}
            {sms.body !== undefined ? (
              <blockquote className="mb-2 rounded-md bg-slate-100 p-3 font-mono text-xs break-words whitespace-pre-wrap text-slate-900" data-testid="sms-body">
                {sms.body}
              </blockquote>
            ) : null}
            <dl className="grid grid-cols-[max-content_1fr] gap-x-3 gap-y-1 text-sm">
              <dt className="text-slate-600">Sender</dt>
              <dd>{sms.sender ?? 'text expired'}</dd>
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
