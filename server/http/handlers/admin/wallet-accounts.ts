import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import {
  createWalletAccount, deleteWalletAccount, getWalletAccount, listWalletAccounts, updateWalletAccount, type WalletAccountView,
} from '../../../domain/wallet-accounts/service.ts';
import { adminActor } from './actor.ts';
import type { WalletAccountType } from '../../../../contract/vocabulary.ts';

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

/** The body's fields as the service names them (absent ones stay absent: a change touches only what it names). */
function accountFields<B extends { number?: string; account_type?: WalletAccountType; label?: string | null; daily_limit?: string | null; enabled?: boolean; device_id?: number | null; sim_slot?: number | null }>(
  body: B,
) {
  return {
    number: body.number as B['number'],
    accountType: body.account_type,
    label: body.label,
    dailyLimit: body.daily_limit,
    enabled: body.enabled,
    deviceId: body.device_id,
    simSlot: body.sim_slot,
  };
}

export const adminWalletAccountHandlers = s.router(contract.admin.walletAccounts, {
  list: async ({ req, params, query }) => {
    const accounts = await listWalletAccounts(req.db, params.brand_id, query.gateway);
    return { status: 200, body: { success: true, data: accounts.map(walletAccountBody) } };
  },
  create: async ({ req, params, body }) => {
    const account = await createWalletAccount(req.db, adminActor(req), params.brand_id, { gateway: body.gateway, ...accountFields(body) });
    return { status: 201, body: { success: true, data: walletAccountBody(account) } };
  },
  get: async ({ req, params }) => {
    return { status: 200, body: { success: true, data: walletAccountBody(await getWalletAccount(req.db, params.account_id)) } };
  },
  update: async ({ req, params, body }) => {
    const account = await updateWalletAccount(req.db, adminActor(req), params.account_id, accountFields(body));
    return { status: 200, body: { success: true, data: walletAccountBody(account) } };
  },
  delete: async ({ req, params }) => {
    await deleteWalletAccount(req.db, adminActor(req), params.account_id);
    return { status: 204, body: undefined };
  },
});
