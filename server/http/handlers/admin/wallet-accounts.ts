import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import {
  createWalletAccount, deleteWalletAccount, getWalletAccount, listWalletAccounts, updateWalletAccount, type WalletAccountView,
} from '../../../domain/wallet-accounts/service.ts';
import { adminActor } from './actor.ts';

const s = initServer();

export const walletAccountBody = (a: WalletAccountView) => ({
  id: a.id,
  brand_id: a.brandId,
  gateway: a.gateway,
  number: a.number,
  account_type: a.accountType,
  label: a.label,
  daily_limit: a.dailyLimit,
  // The query's sum is "0" (not "0.00") when nothing was assigned today; the contract's amounts have two places.
  used_today: a.usedToday,
  enabled: a.enabled,
  device_id: a.deviceId,
  sim_slot: a.simSlot,
  last_assigned_at: a.lastAssignedAt?.toISOString() ?? null,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export const adminWalletAccountHandlers = s.router(contract.admin.walletAccounts, {
  list: async ({ req, params, query }) => {
    const accounts = await listWalletAccounts(req.db, params.brand_id, query.gateway);
    return { status: 200, body: { success: true, data: accounts.map(walletAccountBody) } };
  },
  create: async ({ req, params, body }) => {
    const account = await createWalletAccount(req.db, adminActor(req), params.brand_id, {
      gateway: body.gateway,
      number: body.number,
      accountType: body.account_type,
      label: body.label,
      dailyLimit: body.daily_limit,
      enabled: body.enabled,
      deviceId: body.device_id,
      simSlot: body.sim_slot,
    });
    return { status: 201, body: { success: true, data: walletAccountBody(account) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: walletAccountBody(await getWalletAccount(req.db, params.account_id)) } };
  },
  update: async ({ req, params, body }) => {
    const account = await updateWalletAccount(req.db, adminActor(req), params.account_id, {
      number: body.number,
      accountType: body.account_type,
      label: body.label,
      dailyLimit: body.daily_limit,
      enabled: body.enabled,
      deviceId: body.device_id,
      simSlot: body.sim_slot,
    });
    return { status: 200, body: { success: true, data: walletAccountBody(account) } };
  },
  delete: async ({ req, params }) => {
    await deleteWalletAccount(req.db, adminActor(req), params.account_id);
    return { status: 204, body: undefined };
  },
});
