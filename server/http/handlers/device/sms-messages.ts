import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { ingestForwardedBatch } from '../../../domain/sms/index.ts';
import type { MatchSmsRecords } from '../../../domain/sms/index.ts';
import { deviceOf } from '../../context.ts';
import { recordDeviceClock } from '../../../domain/devices/clock.ts';
import { recordSequences } from '../../../domain/recovery/sequences/service.ts';

const s = initServer();

/** `matchSmsRecords`: the SMS matching implementation, once it exists (see matching-seam.ts). */
export function deviceSmsMessagesHandlers(deps: AppDeps, matchSmsRecords?: MatchSmsRecords) {
  return s.router(contract.device.smsMessages, {
    forward: async ({ req, body }) => {
      const device = deviceOf(req);
      // Before the batch's INSERT, so its own SMS times are corrected with it.
      if (body.device_time) await recordDeviceClock(req.db, device.deviceId, new Date(body.device_time));
      const answers = await ingestForwardedBatch(
        req.db,
        {
          cipher: deps.crypto.pii,
          hashKey: deps.crypto.blindIndexKey,
          match: matchSmsRecords,
          onMatchError: (err) =>
            deps.logger.error({ request_id: req.requestId, err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS matching failed; records left pending'),
        },
        device,
        body.messages.map((m) => ({
          deviceMessageId: m.device_message_id,
          sender: m.sender,
          body: m.body,
          receivedAt: new Date(m.received_at),
          simSlot: m.sim_slot ?? null,
          receivingNumber: m.receiving_number ?? null,
          part: m.part,
        })),
      );
      // After the SMS are stored: a number is seen once its SMS is (a failed batch is retried with its numbers).
      await recordSequences(req.db, device.deviceId, {
        epoch: body.sequence_epoch,
        forwarded: body.messages.flatMap((m, i) => (m.sequence === undefined || !('result' in answers[i]!) ? [] : [{ simSlot: m.sim_slot ?? null, sequence: m.sequence }])),
        // A message the service's own rules refused was seen by the phone all the same.
        screened: [
          ...body.messages.flatMap((m, i) => (m.sequence === undefined || 'result' in answers[i]! ? [] : [{ simSlot: m.sim_slot ?? null, from: m.sequence, to: m.sequence }])),
          ...(body.screened_sequences ?? []).map((r) => ({ simSlot: r.sim_slot, from: r.from, to: r.to })),
        ],
      });
      return {
        status: 200,
        body: {
          success: true,
          data: body.messages.map((m, i) => {
            const answer = answers[i]!;
            if ('awaiting' in answer) {
              return { device_message_id: m.device_message_id, id: null, match_status: 'awaiting_parts' as const, screen_reason: null, trx_id: null, duplicate_of: null };
            }
            if (!('result' in answer)) {
              return { device_message_id: m.device_message_id, id: null, match_status: 'screened_out' as const, screen_reason: answer.screen.reason, trx_id: null, duplicate_of: null };
            }
            const r = answer.result;
            return { device_message_id: r.deviceMessageId, id: r.id, match_status: r.matchStatus, screen_reason: null, trx_id: r.trxId, duplicate_of: r.duplicateOf };
          }),
        },
      };
    },
  });
}
