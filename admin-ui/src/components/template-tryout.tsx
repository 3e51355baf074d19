import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { z } from 'zod';
import type { adminGatewaySchema, templateEvaluationSchema } from '../../../contract/admin/gateways.ts';
import { api, ok } from '../api.ts';
import { Button, Card, ErrorBox, Field, Input, TextArea } from './ui.tsx';
import { FieldError, groupedAmount, invalidProps, unplaced } from './field-error.tsx';

type Gateway = z.output<typeof adminGatewaySchema>;
type Sample = z.output<typeof templateEvaluationSchema>['samples'][number];
type Reading = NonNullable<Sample['proposed']>;

const KINDS: Record<string, string> = {
  received: 'payment received',
  cash_in: 'cash-in',
  payment: 'merchant payment',
  send_money: 'Send Money',
  cash_out: 'Cash Out',
  cashback: 'cashback',
};
const kindWords = (k: string | null) => (k ? (KINDS[k] ?? k.replace(/_/g, ' ')) : null);

/** A reading in words: "Recognised as a bKash payment received: amount 500.00 BDT, trx id 8AB3CD4EF5, from ***678, balance 1,200.00." */
export function readingInWords(r: Reading, gateway: { name: string; currency: string }): string {
  const parts = [`amount ${groupedAmount(r.amount)} ${gateway.currency}`];
  if (r.trx_id) parts.push(`trx id ${r.trx_id}`);
  if (r.sender_number) parts.push(`${r.direction === 'out' ? 'to' : 'from'} ${r.sender_number}`);
  if (r.fee && r.fee !== '0.00') parts.push(`fee ${groupedAmount(r.fee)}`);
  if (r.balance) parts.push(`balance ${groupedAmount(r.balance)}`);
  const kind = kindWords(r.kind);
  const by = `(template ${r.template_index + 1})`;
  if (r.direction === 'out') {
    return `Recognised as money going out of the ${gateway.name} wallet${kind ? ` (${kind})` : ''}: ${parts.join(', ')} ${by}. It never pays a payment; it only keeps the balance chain.`;
  }
  if (r.kind === 'cashback') return `Recognised as a ${gateway.name} cashback: ${parts.join(', ')} ${by}. Never a customer's payment.`;
  return `Recognised as a ${gateway.name} ${kind ?? 'payment received'}: ${parts.join(', ')} ${by}.`;
}

/**
 * Paste a sample SMS and read what the templates in the editor make of it, in
 * words (POST /gateways/:code/template-evaluations with one sample; nothing is
 * stored). `proposal` gives the editor's templates and senders, or throws when
 * they are not valid JSON.
 */
export function TemplateTryOut({ gateway, proposal }: { gateway: Gateway; proposal(): { sms_templates: unknown[]; sms_senders: string[] } }) {
  const [body, setBody] = useState('');
  const [sender, setSender] = useState(gateway.sms_senders[0] ?? '');
  const info = { name: gateway.name, currency: gateway.currencies[0] ?? '' };
  const tryIt = useMutation({
    mutationFn: async () => {
      const p = proposal();
      const res = await ok(
        api.gateways.evaluateTemplates({
          params: { code: gateway.code },
          // One day, one stored record: the answer wanted is the sample's; the stored SMS are the other button's.
          body: { sms_templates: p.sms_templates as never, sms_senders: p.sms_senders, days: 1, limit: 1, samples: [{ body, ...(sender.trim() ? { sender: sender.trim() } : {}) }] },
        }),
      );
      return res.data.samples[0]!;
    },
  });
  const err = tryIt.error;
  const s = tryIt.data;
  return (
    <div role="region" aria-label="Try a sample SMS">
      <Card title="Try a sample SMS">
        <p className="mb-3 text-sm text-slate-700">Paste an SMS as the phone shows it to see what the templates above read from it. Nothing is stored or saved.</p>
        <form
          className="grid gap-3"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            tryIt.mutate();
          }}
        >
          <Field label="Sample SMS" htmlFor="tryout-body">
            <TextArea id="tryout-body" rows={3} aria-required="true" value={body} onChange={(e) => setBody(e.target.value)} {...invalidProps(err, 'samples', 'tryout-body')} />
            <FieldError error={err} field="samples" id="tryout-body" />
          </Field>
          <Field label="Sender" htmlFor="tryout-sender" hint="As the phone shows it; official senders only are read.">
            <Input id="tryout-sender" className="sm:max-w-xs" value={sender} onChange={(e) => setSender(e.target.value)} />
          </Field>
          <ErrorBox error={unplaced(err, ['samples'])} />
          <div>
            <Button type="submit" variant="primary" busy={tryIt.isPending}>
              Try the sample
            </Button>
          </div>
        </form>
        {s ? (
          <div className="mt-3 rounded-md bg-slate-50 p-3 text-sm" role="status" data-testid="tryout-result">
            {s.proposed ? (
              <p className="font-medium text-green-900">{readingInWords(s.proposed, info)}</p>
            ) : (
              <p className="font-medium text-red-800">Not recognised: {s.proposed_miss?.message ?? 'no template reads it.'}</p>
            )}
            {s.change !== 'unchanged' ? (
              <p className="mt-1 text-slate-700">
                {s.current ? `With the saved templates: ${readingInWords(s.current, info)}` : 'The saved templates do not read it.'}
                {s.change === 'changed' ? ` Read differently: ${s.changed_fields.join(', ').replace(/_/g, ' ')}.` : ''}
              </p>
            ) : null}
          </div>
        ) : null}
      </Card>
    </div>
  );
}
