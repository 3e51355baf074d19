import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../api.ts';
import { useMode } from '../mode.tsx';
import { useSession } from '../session.tsx';
import { useBrandName } from '../queries.ts';
import { formatClock } from '../format.ts';
import { Badge, Button, Card, Dialog, Empty, ErrorBox, Field, Loading, ModeBadge, Notice, PageTitle, StatusBadge, TextArea, ago, cx, money, time } from '../components/ui.tsx';
import { differences, Evidence, type Sms, type Tx } from './review-evidence.tsx';

/** How often the queue asks the server again. */
const POLL_MS = 4_000;

type Item = { key: string; kind: 'tx'; at: string; tx: Tx } | { key: string; kind: 'sms'; at: string; sms: Sms };

function useQueue() {
  const { mode } = useMode();
  const txs = useQuery({
    queryKey: ['review', 'tx', mode],
    queryFn: async () => (await ok(api.transactions.list({ query: { status: 'awaiting_verification', mode, per_page: '100' } }))).data,
    refetchInterval: POLL_MS,
  });
  // The SMS half of the queue as the server defines it (docs/matching.md): records the
  // matcher left for a person (no_candidate, low_confidence, balance_mismatch), unresolved.
  const sms = useQuery({
    queryKey: ['review', 'sms', mode],
    queryFn: async () => (await ok(api.smsRecords.list({ query: { needs_review: 'true', mode, per_page: '100' } }))).data,
    refetchInterval: POLL_MS,
  });
  const items = useMemo<Item[]>(() => {
    const list: Item[] = (txs.data ?? []).map((tx) => ({ key: `tx:${tx.id}`, kind: 'tx', at: tx.created_at, tx }));
    for (const s of sms.data ?? []) list.push({ key: `sms:${s.id}`, kind: 'sms', at: s.server_received_at, sms: s });
    // Oldest first: whoever has waited longest is looked at first.
    return list.sort((a, b) => a.at.localeCompare(b.at));
  }, [txs.data, sms.data]);
  return {
    items,
    loading: txs.isPending || sms.isPending,
    error: txs.error ?? sms.error ?? null,
    refreshedAt: Math.max(txs.dataUpdatedAt, sms.dataUpdatedAt),
  };
}

export function ReviewScreen() {
  const { items, loading, error, refreshedAt } = useQueue();
  const [selected, setSelected] = useState<string | null>(null);
  const lastIndex = useRef(0);
  const [done, setDone] = useState<string | null>(null);
  const brandName = useBrandName();

  // Keep a selection: the one chosen, or the item now at the place of one that left the queue.
  const index = items.findIndex((i) => i.key === selected);
  useEffect(() => {
    if (index >= 0) lastIndex.current = index;
    else if (items.length > 0) setSelected(items[Math.min(lastIndex.current, items.length - 1)]!.key);
  }, [index, items]);
  const current = index >= 0 ? items[index]! : null;

  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.closest('input, textarea, select, [contenteditable="true"]') || t.closest('dialog[open]'))) return;
      if (e.key === 'j' || e.key === 'k') {
        e.preventDefault();
        const next = Math.max(0, Math.min(items.length - 1, (index < 0 ? 0 : index) + (e.key === 'j' ? 1 : -1)));
        if (items[next]) setSelected(items[next]!.key);
      }
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [items, index]);

  return (
    <div>
      <PageTitle actions={<span className="text-xs text-slate-600" aria-live="polite">{refreshedAt ? `Updated ${formatClock(refreshedAt)}` : null}</span>}>
        Review queue <span className="text-base font-normal text-slate-600">({items.length})</span>
      </PageTitle>
      <p className="mb-3 hidden text-xs text-slate-600 md:block">
        <kbd>j</kbd>/<kbd>k</kbd> next/previous · <kbd>v</kbd> verify with the selected SMS (asks first when anything differs) · <kbd>r</kbd> reject
      </p>
      {done ? <Notice>{done}</Notice> : null}
      <ErrorBox error={error} title="The queue could not be loaded" />
      {loading ? (
        <Loading what="Loading the queue" />
      ) : items.length === 0 ? (
        <Card>
          <Empty>Nothing waits for a decision. New items appear here by themselves.</Empty>
        </Card>
      ) : (
        <div className="grid gap-4 lg:grid-cols-[20rem_1fr]">
          <ul className="flex max-h-[70vh] flex-col gap-1 overflow-y-auto rounded-lg bg-white p-1 shadow-sm ring-1 ring-slate-200 max-lg:max-h-64" aria-label="Items to review">
            {items.map((item) => (
              <li key={item.key}>
                <button
                  type="button"
                  onClick={() => setSelected(item.key)}
                  aria-current={item.key === current?.key ? 'true' : undefined}
                  className={cx('w-full rounded-md px-3 py-2 text-left text-sm', item.key === current?.key ? 'bg-indigo-50 ring-2 ring-indigo-600' : 'hover:bg-slate-50')}
                >
                  {item.kind === 'tx' ? (
                    <>
                      <span className="flex items-center justify-between gap-2">
                        <span className="font-medium">{money(item.tx.amount, item.tx.currency)}</span>
                        <Badge tone="amber">payment</Badge>
                      </span>
                      <span className="block truncate text-xs text-slate-600">
                        {item.tx.gateway} · claims {item.tx.gateway_trx_id ?? 'no id'} · {brandName(item.tx.brand_id)} · {ago(item.tx.created_at)}
                      </span>
                    </>
                  ) : (
                    <>
                      <span className="flex items-center justify-between gap-2">
                        <span className="font-medium">{money(item.sms.parsed_amount)} SMS</span>
                        <StatusBadge status={item.sms.match_status} />
                      </span>
                      <span className="block truncate text-xs text-slate-600">
                        {item.sms.sender ?? 'text expired'} · {item.sms.parsed_trx_id ?? 'no id'} · {brandName(item.sms.brand_id)} · {ago(item.sms.server_received_at)}
                      </span>
                    </>
                  )}
                </button>
              </li>
            ))}
          </ul>
          {current ? <Decision key={current.key} item={current} onDone={(msg) => setDone(msg)} /> : null}
        </div>
      )}
    </div>
  );
}

function useTransaction(id: number | null) {
  return useQuery({
    queryKey: ['tx', id],
    enabled: id != null,
    queryFn: async () => (await ok(api.transactions.get({ params: { transaction_id: String(id) } }))).data,
  });
}

/** The SMS with its text: every such read is in the audit log, so only those on screen are read. */
function useSmsBodies(ids: number[]) {
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: ['sms', id, 'body'],
      queryFn: async () => (await ok(api.smsRecords.get({ params: { sms_record_id: String(id) }, query: { include: 'body' } }))).data,
      staleTime: 30_000,
    })),
  });
}

/** Statuses of an SMS still waiting for a person: only such a record can prove a payment. */
const REVIEWABLE = ['no_candidate', 'low_confidence', 'balance_mismatch'];
/** The furthest a claimed id may be from the SMS's to be corrected (the server's typo distance, docs/matching.md). */
const TYPO_DISTANCE = 2;

type DialogKind = 'verify' | 'reject' | 'no-evidence' | 'dismiss';

function Decision({ item, onDone }: { item: Item; onDone(msg: string): void }) {
  const { can } = useSession();
  const queryClient = useQueryClient();
  const mayAct = can('operate');
  // A payment item: its candidate SMS; an SMS item: the transactions it may belong to.
  const txId = item.kind === 'tx' ? item.tx.id : null;
  const txDetail = useTransaction(txId);
  const smsIds = item.kind === 'tx' ? (txDetail.data?.sms_records ?? []).filter((s) => REVIEWABLE.includes(s.match_status)).map((s) => s.id) : [item.sms.id];
  const smsQueries = useSmsBodies(smsIds);
  const candidateTxIds =
    item.kind === 'sms' ? [...new Set([...item.sms.suggestions.map((s) => s.transaction_id), ...item.sms.candidate_ids])] : [];
  const candidateTxs = useQueries({
    queries: candidateTxIds.map((id) => ({
      queryKey: ['tx', id],
      queryFn: async () => (await ok(api.transactions.get({ params: { transaction_id: String(id) } }))).data,
    })),
  });

  const [pick, setPick] = useState<number | null>(null);
  const [dialog, setDialog] = useState<null | DialogKind>(null);
  const [text, setText] = useState('');

  // The pair on screen: for a payment, it and the chosen SMS; for an SMS, it and the chosen transaction.
  // An SMS another decision already resolved proves nothing more: it is not offered.
  const smsList = smsQueries.map((q) => q.data).filter((s): s is Sms => !!s && s.resolution === null && REVIEWABLE.includes(s.match_status));
  const openTxs = candidateTxs.map((q) => q.data).filter((t): t is NonNullable<typeof t> => !!t && ['pending', 'processing', 'awaiting_verification'].includes(t.status));
  const chosenSms: Sms | null = item.kind === 'tx' ? (smsList.find((s) => s.id === pick) ?? smsList[0] ?? null) : (smsList[0] ?? null);
  const chosenTx: Tx | null = item.kind === 'tx' ? item.tx : (openTxs.find((t) => t.id === pick) ?? openTxs[0] ?? null);

  const diffs = chosenTx && chosenSms ? differences(chosenTx, chosenSms) : [];
  const amountDiffers = diffs.some((d) => d.field === 'amount');
  const idDiffers = diffs.some((d) => d.field === 'trx_id');
  const gatewayDiffers = diffs.some((d) => d.field === 'gateway');
  // The matcher's own measure when it suggested this pair; unknown otherwise (the server decides).
  const distance = chosenTx && chosenSms ? (chosenSms.suggestions.find((x) => x.transaction_id === chosenTx.id)?.distance ?? null) : null;
  const idCorrectable = idDiffers && (distance === null || distance <= TYPO_DISTANCE);
  const needsNote = amountDiffers || idDiffers;

  // A decision changes every case that names the same payment or SMS: all of them are asked again.
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['review'] }),
      queryClient.invalidateQueries({ queryKey: ['tx'] }),
      queryClient.invalidateQueries({ queryKey: ['sms'] }),
      queryClient.invalidateQueries({ queryKey: ['timeline'] }),
    ]);
  const verify = useMutation({
    mutationFn: async (v: { tx: Tx; smsId?: number; note?: string; correctTrxId?: boolean; acceptAmountDifference?: boolean }) =>
      (
        await ok(
          api.transactions.verify({
            params: { transaction_id: String(v.tx.id) },
            body: {
              ...(v.smsId ? { sms_record_id: v.smsId } : {}),
              ...(v.note ? { note: v.note } : {}),
              ...(v.correctTrxId ? { correct_trx_id: true } : {}),
              ...(v.acceptAmountDifference ? { accept_amount_difference: true } : {}),
            },
          }),
        )
      ).data,
    onSuccess: async (tx) => {
      setDialog(null);
      onDone(`Verified ${money(tx.amount, tx.currency)} (${tx.trx_id}${tx.gateway_trx_id ? `, trx id ${tx.gateway_trx_id}` : ''}): the merchant is told the payment completed.`);
      await refresh();
    },
    // Refused: the case changed under us (another person decided it); show it as it is now.
    onError: () => void refresh(),
  });
  const reject = useMutation({
    mutationFn: async (v: { tx: Tx; reason: string }) => (await ok(api.transactions.reject({ params: { transaction_id: String(v.tx.id) }, body: { reason: v.reason } }))).data,
    onSuccess: async (tx) => {
      setDialog(null);
      onDone(`Rejected ${money(tx.amount, tx.currency)} (${tx.trx_id}).`);
      await refresh();
    },
    onError: () => void refresh(),
  });
  const dismiss = useMutation({
    mutationFn: async (v: { smsId: number; reason: string }) => (await ok(api.smsRecords.dismiss({ params: { sms_record_id: String(v.smsId) }, body: { reason: v.reason } }))).data,
    onSuccess: async (s) => {
      setDialog(null);
      onDone(`Dismissed SMS #${s.id}: ${s.resolution_note ?? 'it proves no payment'}.`);
      await refresh();
    },
    onError: () => void refresh(),
  });
  const busy = verify.isPending || reject.isPending || dismiss.isPending;

  /** Each dialog opens clean: no text and no refusal left from an earlier one. */
  const openDialog = (kind: DialogKind) => {
    verify.reset();
    reject.reset();
    dismiss.reset();
    setText('');
    setDialog(kind);
  };
  // Verifying with an SMS that differs in anything asks first, listing what differs.
  const verifyNow = () => {
    if (!chosenTx || busy) return;
    if (!chosenSms) openDialog('no-evidence');
    else if (diffs.length > 0) openDialog('verify');
    else {
      verify.reset();
      verify.mutate({ tx: chosenTx, smsId: chosenSms.id });
    }
  };
  const openReject = () => {
    if (!chosenTx || busy) return;
    openDialog('reject');
  };

  useEffect(() => {
    if (!mayAct) return;
    function onKey(e: KeyboardEvent) {
      if (e.defaultPrevented || e.metaKey || e.ctrlKey || e.altKey) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.closest('input, textarea, select, [contenteditable="true"]') || t.closest('dialog[open]'))) return;
      if (e.key === 'v') {
        e.preventDefault();
        verifyNow();
      } else if (e.key === 'r') {
        e.preventDefault();
        openReject();
      }
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  });

  const loading = txDetail.isPending && txId != null;
  const typed = text.trim();
  return (
    <Card
      title={
        item.kind === 'tx' ? (
          <span className="flex flex-wrap items-center gap-2">
            Payment {item.tx.trx_id} <StatusBadge status={item.tx.status} /> <ModeBadge mode={item.tx.mode} />
          </span>
        ) : (
          <span className="flex flex-wrap items-center gap-2">
            SMS #{item.sms.id} from {item.sms.sender ?? 'an expired sender'} <StatusBadge status={item.sms.match_status} /> <ModeBadge mode={item.sms.mode} />
          </span>
        )
      }
    >
      <ErrorBox error={txDetail.error ?? smsQueries.find((q) => q.error)?.error ?? candidateTxs.find((q) => q.error)?.error} title="Could not load the evidence" />
      {loading ? <Loading what="Loading the evidence" /> : null}

      {item.kind === 'tx' && !loading ? (
        <fieldset className="mb-4">
          <legend className="mb-2 text-sm font-medium">Candidate SMS</legend>
          {smsList.length === 0 ? (
            <p className="text-sm text-slate-600">No forwarded SMS waiting for review lists this payment as a candidate. Verify it only with other proof (a written reason is required), or reject it.</p>
          ) : (
            <div className="flex flex-wrap gap-2">
              {smsList.map((s) => (
                <label key={s.id} className={cx('flex cursor-pointer items-center gap-2 rounded-md px-2 py-1 text-sm ring-1', chosenSms?.id === s.id ? 'bg-indigo-50 ring-indigo-600' : 'ring-slate-300')}>
                  <input type="radio" name="sms" checked={chosenSms?.id === s.id} onChange={() => setPick(s.id)} />
                  SMS #{s.id} · {money(s.parsed_amount)} · {s.parsed_trx_id ?? 'no id'}
                </label>
              ))}
            </div>
          )}
        </fieldset>
      ) : null}

      {item.kind === 'sms' ? (
        <fieldset className="mb-4">
          <legend className="mb-2 text-sm font-medium">Which payment does this SMS prove?</legend>
          {candidateTxs.some((q) => q.isPending) ? <Loading what="Loading the candidates" /> : null}
          {openTxs.length === 0 && !candidateTxs.some((q) => q.isPending) ? <p className="text-sm text-slate-600">No open payment is a candidate for this SMS.</p> : null}
          <div className="flex flex-col gap-1">
            {openTxs.map((t) => {
              const why = item.sms.suggestions.find((s) => s.transaction_id === t.id)?.why;
              return (
                <label key={t.id} className={cx('flex cursor-pointer items-start gap-2 rounded-md px-2 py-1.5 text-sm ring-1', chosenTx?.id === t.id ? 'bg-indigo-50 ring-indigo-600' : 'ring-slate-300')}>
                  <input type="radio" name="tx" className="mt-1" checked={chosenTx?.id === t.id} onChange={() => setPick(t.id)} />
                  <span className="min-w-0">
                    <span className="font-medium">{money(t.amount, t.currency)}</span> · {t.trx_id} · claims {t.gateway_trx_id ?? 'no id'} · payer {t.sender_number ?? 'not declared'} ·{' '}
                    <StatusBadge status={t.status} />
                    {why ? <span className="block text-xs text-slate-600">{why}</span> : null}
                  </span>
                </label>
              );
            })}
          </div>
        </fieldset>
      ) : null}

      {chosenTx || chosenSms ? <Evidence tx={chosenTx} sms={chosenSms} /> : null}

      <ErrorBox error={dialog ? null : (verify.error ?? reject.error ?? dismiss.error)} title="Refused" />
      <div className="mt-4 flex flex-wrap gap-2 border-t border-slate-200 pt-4">
        {mayAct ? (
          <>
            <Button variant="primary" busy={verify.isPending && !dialog} disabled={!chosenTx || !chosenSms || busy} onClick={verifyNow}>
              Verify{chosenSms ? ` with SMS #${chosenSms.id}` : ''}
              {diffs.length > 0 ? '…' : ''} <kbd className="max-md:hidden">v</kbd>
            </Button>
            <Button disabled={!chosenTx || busy} onClick={() => openDialog('no-evidence')}>
              Verify without SMS…
            </Button>
            <Button variant="danger" disabled={!chosenTx || busy} onClick={openReject}>
              Reject… <kbd className="max-md:hidden">r</kbd>
            </Button>
            {item.kind === 'sms' ? (
              <Button disabled={busy} onClick={() => openDialog('dismiss')}>
                Dismiss SMS…
              </Button>
            ) : null}
          </>
        ) : (
          <p className="text-sm text-slate-600">Your role can read the queue but not decide it.</p>
        )}
      </div>

      <Dialog
        open={dialog !== null}
        title={
          dialog === 'reject'
            ? `Reject ${chosenTx?.trx_id ?? ''}`
            : dialog === 'dismiss' && item.kind === 'sms'
              ? `Dismiss SMS #${item.sms.id}`
              : dialog === 'verify'
                ? `Verify ${chosenTx?.trx_id ?? ''} with SMS #${chosenSms?.id ?? ''}`
                : `Verify ${chosenTx?.trx_id ?? ''} without an SMS`
        }
        onClose={() => setDialog(null)}
      >
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (dialog === 'verify') {
              if (!chosenTx || !chosenSms || (needsNote && !typed)) return;
              verify.mutate({ tx: chosenTx, smsId: chosenSms.id, note: typed || undefined, correctTrxId: idDiffers, acceptAmountDifference: amountDiffers });
              return;
            }
            if (!typed) return;
            if (dialog === 'dismiss' && item.kind === 'sms') dismiss.mutate({ smsId: item.sms.id, reason: typed });
            else if (!chosenTx) return;
            else if (dialog === 'reject') reject.mutate({ tx: chosenTx, reason: typed });
            else verify.mutate({ tx: chosenTx, note: typed });
          }}
          className="flex flex-col gap-3"
        >
          {dialog === 'verify' ? (
            <>
              <p className="text-sm text-slate-700">The payment and the SMS do not agree in everything. Verify only if you checked what differs:</p>
              <ul aria-label="Differences" className="list-disc pl-5 text-sm break-words text-slate-900">
                {diffs.map((d) => (
                  <li key={d.field}>{d.text}</li>
                ))}
              </ul>
              {idDiffers && idCorrectable ? (
                <p className="text-sm text-slate-700">
                  The claimed id {chosenTx?.gateway_trx_id} is corrected to the SMS&apos;s {chosenSms?.parsed_trx_id} (the customer mistyped it); both stay in the timeline and the audit log.
                </p>
              ) : null}
              {idDiffers && !idCorrectable ? <p className="text-sm text-red-800">The ids are more than a typo apart: this SMS is not this payment&apos;s.</p> : null}
              {amountDiffers ? (
                <p className="text-sm text-slate-700">
                  The payment keeps its amount {chosenTx ? money(chosenTx.amount, chosenTx.currency) : ''}; the SMS&apos;s {money(chosenSms?.parsed_amount)} is accepted as paid.
                </p>
              ) : null}
              {gatewayDiffers ? <p className="text-sm text-red-800">An SMS of another gateway cannot prove this payment.</p> : null}
            </>
          ) : (
            <p className="text-sm text-slate-700">
              {dialog === 'reject'
                ? 'The merchant gets payment.failed with this reason (no customer data); the customer may pay again.'
                : dialog === 'dismiss'
                  ? typed
                    ? `SMS #${item.kind === 'sms' ? item.sms.id : ''} leaves the queue without completing anything, dismissed as: “${typed}”.`
                    : 'Say why this SMS proves no payment; it then leaves the queue without completing anything.'
                  : 'The payment completes on your word. Say what proves it (kept with the record).'}
            </p>
          )}
          <Field
            label={
              dialog === 'no-evidence'
                ? 'What proves the payment'
                : dialog === 'verify'
                  ? needsNote
                    ? 'Why you accept it (required)'
                    : 'Note (optional)'
                  : 'Reason'
            }
            htmlFor="decision-text"
          >
            <TextArea id="decision-text" rows={3} required={dialog !== 'verify' || needsNote} maxLength={500} value={text} onChange={(e) => setText(e.target.value)} autoFocus />
          </Field>
          <ErrorBox error={dialog === 'reject' ? reject.error : dialog === 'dismiss' ? dismiss.error : verify.error} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setDialog(null)}>Cancel</Button>
            <Button
              type="submit"
              variant={dialog === 'reject' ? 'danger' : 'primary'}
              busy={busy}
              disabled={dialog === 'verify' ? (needsNote && !typed) || (idDiffers && !idCorrectable) || gatewayDiffers : !typed}
            >
              {dialog === 'reject'
                ? 'Reject payment'
                : dialog === 'dismiss'
                  ? 'Dismiss SMS'
                  : dialog === 'verify'
                    ? idDiffers && amountDiffers
                      ? 'Verify, correct the id and accept the amount'
                      : idDiffers
                        ? 'Verify and correct the id'
                        : amountDiffers
                          ? 'Verify and accept the amount'
                          : 'Verify anyway'
                    : 'Verify payment'}
            </Button>
          </div>
        </form>
      </Dialog>
      <p className="mt-3 text-xs text-slate-500">Created {time(item.at)}</p>
    </Card>
  );
}
