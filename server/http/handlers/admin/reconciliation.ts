import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { reconciliationCategories, type ReconciliationCategory } from '../../../../contract/vocabulary.ts';
import {
  getReconciliation, listReconciliations, reportCsv, reportFileName, uploadStatement, type ReconciliationView,
} from '../../../domain/reconciliation/service.ts';
import type { UploadRow } from '../../../domain/reconciliation/queries.ts';
import { brandScopeOf } from '../../brand-scope.ts';
import { adminActor, pageMeta } from './actor.ts';

const s = initServer();

const uploadBody = (u: UploadRow) => ({
  id: u.id,
  brand_id: u.brand_id,
  wallet_account_id: u.wallet_account_id,
  account_number: u.account_number,
  gateway: u.gateway_code,
  mode: u.mode,
  day: u.day,
  format: u.format,
  file_name: u.file_name,
  row_count: u.row_count,
  uploaded_by: u.uploaded_by,
  created_at: u.created_at.toISOString(),
  counts: Object.fromEntries(reconciliationCategories.map((k) => [k, u.counts[k] ?? 0])) as Record<ReconciliationCategory, number>,
});

const reportBody = (v: ReconciliationView) => ({
  upload: uploadBody(v.upload),
  items: v.items.map((i) => ({
    id: i.id,
    category: i.category,
    trx_id: i.trxId,
    line: i.line,
    occurred_at: i.occurredAt?.toISOString() ?? null,
    statement_amount: i.statementAmount,
    statement_fee: i.statementFee,
    statement_balance: i.statementBalance,
    statement_type: i.statementType,
    statement_status: i.statementStatus,
    counterparty: i.counterparty,
    sms_record_id: i.smsRecordId,
    sms_amount: i.smsAmount,
    sms_fee: i.smsFee,
    sms_time: i.smsTime?.toISOString() ?? null,
    sms_status: i.smsStatus,
    transaction_id: i.transactionId,
    transaction_status: i.transactionStatus,
    hint_transaction_ids: i.hintTransactionIds,
  })),
});

export function adminReconciliationHandlers(deps: AppDeps) {
  const cipher = deps.crypto.pii;
  return s.router(contract.admin.reconciliation, {
    upload: async ({ req, params, body }) => {
      const view = await uploadStatement(req.db, cipher, adminActor(req), {
        accountId: params.account_id, day: body.day, mode: body.mode, fileName: body.file_name ?? null, content: body.content,
      });
      return { status: 201, body: { success: true, data: reportBody(view) } };
    },
    list: async ({ req, query }) => {
      const { rows, total } = await listReconciliations(req.db, {
        scope: brandScopeOf(req.principal), brandId: query.brand_id, accountId: query.account_id, day: query.day, mode: query.mode, page: query.page, perPage: query.per_page,
      });
      return { status: 200, body: { success: true, data: rows.map(uploadBody), meta: pageMeta(query.page, query.per_page, total) } };
    },
    get: async ({ req, params }) => {
      const view = await getReconciliation(req.db, cipher, params.statement_id, brandScopeOf(req.principal));
      return { status: 200, body: { success: true, data: reportBody(view) } };
    },
    downloadCsv: async ({ req, res, params }) => {
      const view = await getReconciliation(req.db, cipher, params.statement_id, brandScopeOf(req.principal));
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="${reportFileName(view.upload)}"`);
      res.setHeader('Cache-Control', 'no-store');
      return { status: 200, body: reportCsv(view) };
    },
  });
}
