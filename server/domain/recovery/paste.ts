import { randomUUID } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import { transaction, type Db } from '../db.ts';
import type { PiiCipher } from '../../infra/crypto/pii-cipher.ts';
import { recordAudit, type AuditActor } from '../audit/service.ts';
import { ingestSmsBatch } from '../sms/index.ts';
import { deviceState } from './queries.ts';
import type { MatchSmsRecords } from '../sms/index.ts';

/**
 * An SMS the phone never forwarded, entered by an operator. It is stored and
 * matched by the very intake a forwarded SMS takes (ingestSmsBatch): the same
 * content hash (brand, sender, text; never time or device) makes the phone's
 * own copy, forwarded later, a `duplicate` of it, and it of an earlier copy.
 * The message id is the operator's own (`pasted-<uuid>`), so it never collides
 * with a phone's.
 */
export async function pasteSms(
  em: Db,
  deps: { cipher: PiiCipher; hashKey: Buffer; match: MatchSmsRecords; onMatchError?: (err: unknown) => void },
  who: AuditActor,
  input: { deviceId: number; sender: string; body: string; receivedAt: Date; operatorName: string | null },
): Promise<{ id: number; duplicateOf: number | null }> {
  const device = await deviceState(em, input.deviceId);
  if (!device) throw new AppError('DEVICE_NOT_FOUND', undefined, { field: 'device_id' });
  // A revoked phone's SMS are no longer trusted as evidence when forwarded; an operator cannot bring them in by hand either.
  if (device.status === 'revoked') throw new AppError('DEVICE_REVOKED', undefined, { field: 'device_id' });
  const brandId = device.brand_id;
  const [result] = await ingestSmsBatch(em, { cipher: deps.cipher, hashKey: deps.hashKey, match: deps.match, onMatchError: deps.onMatchError }, { brandId, deviceId: input.deviceId }, [
    {
      deviceMessageId: `pasted-${randomUUID()}`,
      sender: input.sender,
      body: input.body,
      receivedAt: input.receivedAt,
      simSlot: null,
      pasted: { enteredBy: who.actor, operatorName: input.operatorName },
    },
  ]);
  await transaction(em, (tx) =>
    recordAudit(tx, who, {
      action: 'sms_record.paste',
      targetType: 'sms_record',
      targetId: result!.id,
      brandId,
      after: { device_id: input.deviceId, entry: 'pasted', match_status: result!.matchStatus, duplicate_of: result!.duplicateOf, operator_name: input.operatorName },
    }),
  );
  return { id: result!.id, duplicateOf: result!.duplicateOf };
}
