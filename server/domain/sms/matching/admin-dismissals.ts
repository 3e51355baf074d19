import { withAudit, type AuditActor } from '../../audit/service.ts';
import { dismissSmsRecord } from './dismiss.ts';
import type { Db } from '../../db.ts';

/** Dismisses a record left for review and records who did it and why, in one transaction. */
export async function dismissSmsRecordAudited(em: Db, who: AuditActor, smsRecordId: number, reason: string): Promise<void> {
  await withAudit(em, who, async (tx) => {
    const d = await dismissSmsRecord(tx, { smsRecordId, actor: who.actor, reason });
    return {
      result: undefined,
      audit: { action: 'sms_record.dismiss', targetType: 'sms_record', targetId: d.smsRecordId, brandId: d.brandId, before: d.before, after: d.after },
    };
  });
}
