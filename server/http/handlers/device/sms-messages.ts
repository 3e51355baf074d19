import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { AppDeps } from '../../../deps.ts';
import { screenSms } from '../../../domain/filter-rules/screen.ts';
import { getFilterRules } from '../../../domain/filter-rules/service.ts';
import { ingestSmsBatch } from '../../../domain/sms-intake/service.ts';
import type { MatchSmsRecords } from '../../../domain/sms-intake/matching-seam.ts';
import { deviceOf } from '../../context.ts';
import { recordDeviceClock } from '../../../domain/devices/clock.ts';

const s = initServer();

/** `matchSmsRecords`: the SMS matching implementation, once it exists (see matching-seam.ts). */
export function deviceSmsMessagesHandlers(deps: AppDeps, matchSmsRecords?: MatchSmsRecords) {
  return s.router(contract.device.smsMessages, {
    forward: async ({ req, body }) => {
      // Before the batch is stored and matched, so its own SMS times are corrected with it.
      if (body.device_time) await recordDeviceClock(req.em, deviceOf(req).deviceId, new Date(body.device_time));
      // The phone screens before forwarding, but a modified or outdated app may not:
      // the service applies the same rules and keeps nothing of a refused message.
      const rules = await getFilterRules(req.em, deviceOf(req).brandId);
      const screens = body.messages.map((m) => screenSms(rules, m));
      const kept = body.messages.filter((_, i) => screens[i]!.forward);
      const results = kept.length === 0 ? [] : await ingestSmsBatch(
        req.em,
        {
          cipher: deps.crypto.pii,
          hashKey: deps.crypto.blindIndexKey,
          match: matchSmsRecords,
          onMatchError: (err) =>
            deps.logger.error({ request_id: req.requestId, err: { message: err instanceof Error ? err.message : String(err) } }, 'SMS matching failed; records left pending'),
        },
        deviceOf(req),
        kept.map((m) => ({
          deviceMessageId: m.device_message_id,
          sender: m.sender,
          body: m.body,
          receivedAt: new Date(m.received_at),
          simSlot: m.sim_slot ?? null,
        })),
      );
      let stored = 0;
      return {
        status: 200,
        body: {
          success: true,
          data: body.messages.map((m, i) => {
            const screen = screens[i]!;
            if (!screen.forward) {
              return { device_message_id: m.device_message_id, id: null, match_status: 'screened_out' as const, screen_reason: screen.reason, trx_id: null, duplicate_of: null };
            }
            const r = results[stored++]!;
            return { device_message_id: r.deviceMessageId, id: r.id, match_status: r.matchStatus, screen_reason: null, trx_id: r.trxId, duplicate_of: r.duplicateOf };
          }),
        },
      };
    },
  });
}
