import type { AppDeps } from '../../deps.ts';
import type { MinuteSweep } from '../../infra/jobs/scheduled.ts';
import { recordEvents } from '../webhooks/outbox.ts';
import { transaction } from '../db.ts';
import { markDueInvoicesOverdue, selectInvoiceById } from './queries.ts';
import { invoiceEventData } from './service.ts';

/** Invoices moved per run; the rest wait for the next minute. */
const OVERDUE_PER_SWEEP = 500;

export const INVOICE_OVERDUE_SWEEP = 'invoices-overdue';

/**
 * Open invoices whose due date has passed in their brand's time zone become
 * `overdue`, each with one `invoice.overdue` event in the same transaction. The
 * move happens once per invoice (open → overdue), so the event is sent once,
 * however often the sweep runs. An overdue invoice is still payable.
 */
export const invoiceOverdueSweep: MinuteSweep<Pick<AppDeps, 'db'>> = {
  name: INVOICE_OVERDUE_SWEEP,
  async run(deps) {
    return transaction(deps.db, async (tx) => {
      const ids = await markDueInvoicesOverdue(tx, OVERDUE_PER_SWEEP);
      const rows = [];
      for (const id of ids) rows.push(await selectInvoiceById(tx, id));
      await recordEvents(tx, rows.map((r) => ({ brandId: r.brand_id, mode: r.mode, event: 'invoice.overdue' as const, data: invoiceEventData(r) })));
      return { overdue: ids.length };
    });
  },
};
