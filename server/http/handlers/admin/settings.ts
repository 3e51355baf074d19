import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import { updateSettingsAudited } from '../../../domain/settings/admin.ts';
import { getSettings } from '../../../domain/settings/service.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export const adminSettingHandlers = s.router(contract.admin.settings, {
  get: async ({ req }) => {
    return { status: 200, body: { success: true, data: await getSettings(req.db) } };
  },
  update: async ({ req, body }) => {
    return { status: 200, body: { success: true, data: await updateSettingsAudited(req.db, adminActor(req), body) } };
  },
});
