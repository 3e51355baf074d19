import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta, ok, timestampSchema } from '../common/index.ts';
import { DEVICE_PATH_PREFIX, idPathParam } from './shared.ts';
import { backfillReasons } from '../vocabulary.ts';

const c = initContract();

export const deviceCommandSchema = z
  .object({
    id: z.number().int().describe('Command id; complete it with this id.'),
    type: z.literal('backfill_sms').describe('`backfill_sms`: re-forward, through `POST /sms-messages`, every SMS of an allowed sender the phone received between `from` and `to`, then complete the command.'),
    from: timestampSchema,
    to: timestampSchema,
    reason: z.enum(backfillReasons).describe('Why the service asks (informative).'),
    senders: z
      .array(z.string())
      .nullable()
      .describe('Re-forward only SMS of these senders (compared as the filter rules compare senders); null: every sender the filter rules allow. `payment_submitted` asks for the gateway\'s official senders only.'),
    sequences: z
      .object({
        sim_slot: z.number().int().nullable().describe('SIM slot of the counter; null: the counter of SMS whose slot the phone does not know.'),
        sequence_epoch: z.string().describe('Epoch of the counter (`default` when the app sends none).'),
        numbers: z.array(z.number().int()).describe('The sequence numbers to re-forward, ascending.'),
      })
      .optional()
      .describe('For `reason: sequence_gap`: re-forward exactly the SMS the app numbered so (with their `sequence`, `sim_slot`, `sequence_epoch` and original `device_message_id`); a number whose SMS was screened out on the phone is reported in `screened_sequences` instead. `from`/`to` then only bound when they arrived.'),
    created_at: timestampSchema,
  })
  .meta({ id: 'DeviceCommand' });

export const commandCompletionSchema = z
  .strictObject({
    resent_count: z.number().int().min(0).max(100_000).describe('How many SMS of the window the phone re-forwarded (0 when it had none).'),
  })
  .meta({ id: 'DeviceCommandCompletion' });

export const commandsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/commands',
      summary: 'Open commands',
      description:
        "The calling device's open commands, oldest first. The app polls this on start, after every push notification and periodically; a command stays listed until completed. Re-sent SMS are stored once by their `device_message_id`, so answering a command twice is harmless.",
      responses: { 200: ok(z.array(deviceCommandSchema)) },
      metadata: meta({ auth: 'device', tag: 'Device commands' }),
    },
    complete: {
      method: 'POST',
      path: '/commands/:command_id/complete',
      summary: 'Complete a command',
      description: "Reports a command done. Another device's or an unknown id is 404 `NOT_FOUND`; completing twice keeps the first answer.",
      pathParams: z.object({ command_id: idPathParam('command') }),
      body: commandCompletionSchema,
      responses: { 200: ok(deviceCommandSchema.extend({ status: z.enum(['answered']), resent_count: z.number().int() })) },
      metadata: meta({ auth: 'device', tag: 'Device commands', errors: ['NOT_FOUND'] }),
    },
  },
  { pathPrefix: DEVICE_PATH_PREFIX, strictStatusCodes: true },
);
