import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { completeBackfillCommand, pollBackfillCommands, type BackfillRequestView } from '../../../domain/recovery/backfill.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

const command = (r: BackfillRequestView) => ({
  id: r.id,
  type: 'backfill_sms' as const,
  from: r.from.toISOString(),
  to: r.to.toISOString(),
  reason: r.reason,
  senders: r.senders,
  ...(r.sequences ? { sequences: { sim_slot: r.sequences.simSlot, sequence_epoch: r.sequences.epoch, numbers: r.sequences.numbers } } : {}),
  created_at: r.createdAt.toISOString(),
});

export const deviceCommandsHandlers = s.router(contract.device.commands, {
  list: async ({ req }) => {
    const items = await pollBackfillCommands(req.db, deviceOf(req).deviceId);
    return { status: 200, body: { success: true, data: items.map(command) } };
  },
  complete: async ({ req, params, body }) => {
    const r = await completeBackfillCommand(req.db, deviceOf(req).deviceId, Number(params.command_id), body.resent_count);
    return { status: 200, body: { success: true, data: { ...command(r), status: 'answered' as const, resent_count: r.resentCount ?? body.resent_count } } };
  },
});
