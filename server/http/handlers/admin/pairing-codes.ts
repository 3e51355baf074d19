import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { createPairingCodeAudited } from '../../../domain/devices/admin.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export const adminPairingCodeHandlers = s.router(contract.admin.pairingCodes, {
  create: async ({ req, params, body }) => {
    const code = await createPairingCodeAudited(req.db, adminActor(req), params.brand_id, { ttlMinutes: body?.ttl_minutes, mode: body?.mode });
    return { status: 201, body: { success: true, data: code } };
  },
});
