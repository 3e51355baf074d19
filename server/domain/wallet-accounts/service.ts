import { AppError } from '../../../contract/common/errors.ts';
import type { WalletAccountType } from '../../../contract/vocabulary.ts';
import { withAudit, type AuditActor, type AuditState } from '../audit/service.ts';
import { getAdminBrand } from '../brands/admin.ts';
import { getGateway } from '../gateways/service.ts';
import { addMoney, compareMoney } from '../money/decimal.ts';
import { type Db } from '../db.ts';
import { isUniqueViolation } from '../../infra/database/database.ts';
import {
  accountHasTransactions, accountById, accountsOfBrand, assignmentChoices, deleteAccount, deviceForBinding, insertAccount, insertAssignment, updateAccount,
  type WalletAccountRow,
} from './queries.ts';

/**
 * A brand's own receiving accounts on the platform's manual gateways
 * (docs/matching.md, "Wallet accounts"). The gateway stays the template
 * (senders, templates, fees, limits); the number the customer pays into, and
 * the phone and SIM that receive its SMS, are the brand's.
 */
export interface WalletAccountView {
  id: number;
  brandId: number;
  gateway: string;
  gatewayId: number;
  number: string;
  accountType: WalletAccountType;
  label: string | null;
  dailyLimit: string | null;
  /** The amounts to send of its transactions started today (brand's time zone), open or completed. */
  usedToday: string;
  enabled: boolean;
  deviceId: number | null;
  simSlot: number | null;
  lastAssignedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

function toView(r: WalletAccountRow): WalletAccountView {
  return {
    id: r.id,
    brandId: r.brand_id,
    gateway: r.gateway_code,
    gatewayId: r.gateway_id,
    number: r.number,
    accountType: r.account_type,
    label: r.label,
    dailyLimit: r.daily_limit,
    usedToday: r.used_today,
    enabled: r.enabled,
    deviceId: r.device_id,
    simSlot: r.sim_slot,
    lastAssignedAt: r.last_assigned_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface WalletAccountInput {
  gateway: string;
  number: string;
  accountType?: WalletAccountType;
  label?: string | null;
  dailyLimit?: string | null;
  enabled?: boolean;
  deviceId?: number | null;
  simSlot?: number | null;
}
export type WalletAccountPatch = Partial<Omit<WalletAccountInput, 'gateway'>>;

const state = (a: WalletAccountView): AuditState => ({
  gateway: a.gateway,
  number: a.number,
  account_type: a.accountType,
  label: a.label,
  daily_limit: a.dailyLimit,
  enabled: a.enabled,
  device_id: a.deviceId,
  sim_slot: a.simSlot,
});

export async function listWalletAccounts(em: Db, brandId: number, gatewayCode?: string): Promise<WalletAccountView[]> {
  await getAdminBrand(em, brandId);
  return (await accountsOfBrand(em, brandId, gatewayCode)).map(toView);
}

export async function getWalletAccount(em: Db, accountId: number): Promise<WalletAccountView> {
  const row = await accountById(em, accountId);
  if (!row) throw new AppError('WALLET_ACCOUNT_NOT_FOUND');
  return toView(row);
}

/** A phone bound to an account must be an active phone of the same brand. */
async function checkBinding(tx: Db, brandId: number, deviceId: number | null, simSlot: number | null): Promise<void> {
  if (simSlot !== null && deviceId === null) throw new AppError('VALIDATION_ERROR', 'A SIM slot needs the phone it is in (device_id)', { field: 'sim_slot' });
  if (deviceId === null) return;
  const device = await deviceForBinding(tx, deviceId);
  if (!device || device.brand_id !== brandId) throw new AppError('VALIDATION_ERROR', 'Not a phone of this brand', { field: 'device_id' });
  if (device.status === 'revoked') throw new AppError('DEVICE_REVOKED', 'A revoked phone receives no SMS', { field: 'device_id' });
}

async function checkGateway(tx: Db, code: string): Promise<number> {
  let gateway;
  try {
    gateway = await getGateway(tx, code);
  } catch (err) {
    if (err instanceof AppError && err.code === 'GATEWAY_NOT_FOUND') throw new AppError('VALIDATION_ERROR', `No gateway ${code}`, { field: 'gateway' });
    throw err;
  }
  if (gateway.type !== 'manual') throw new AppError('VALIDATION_ERROR', `${code} is an automatic gateway: it has no receiving accounts`, { field: 'gateway' });
  return gateway.id;
}

function conflictOnNumber<T>(fn: () => Promise<T>): Promise<T> {
  return fn().catch((err: unknown) => {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', 'The brand already has this number on this gateway', { field: 'number' });
    throw err;
  });
}

export async function createWalletAccount(em: Db, who: AuditActor, brandId: number, input: WalletAccountInput): Promise<WalletAccountView> {
  return withAudit(em, who, async (tx) => {
    await getAdminBrand(tx, brandId);
    const gatewayId = await checkGateway(tx, input.gateway);
    await checkBinding(tx, brandId, input.deviceId ?? null, input.simSlot ?? null);
    const id = await conflictOnNumber(() =>
      insertAccount(tx, {
        brand_id: brandId, gateway_id: gatewayId, number: input.number, account_type: input.accountType ?? 'personal', label: input.label ?? null,
        daily_limit: input.dailyLimit ?? null, enabled: input.enabled ?? true, device_id: input.deviceId ?? null, sim_slot: input.simSlot ?? null,
      }),
    );
    const created = toView((await accountById(tx, id))!);
    return { result: created, audit: { action: 'wallet_account.create', targetType: 'wallet_account', targetId: id, brandId, after: state(created) } };
  });
}

export async function updateWalletAccount(em: Db, who: AuditActor, accountId: number, patch: WalletAccountPatch): Promise<WalletAccountView> {
  return withAudit(em, who, async (tx) => {
    const row = await accountById(tx, accountId, { forUpdate: true });
    if (!row) throw new AppError('WALLET_ACCOUNT_NOT_FOUND');
    const before = toView(row);
    const brandId = before.brandId;
    const deviceId = patch.deviceId !== undefined ? patch.deviceId : before.deviceId;
    // Moving an account to another phone (or none) forgets its slot unless a new one is given.
    const simSlot = patch.simSlot !== undefined ? patch.simSlot : patch.deviceId !== undefined && patch.deviceId !== before.deviceId ? null : before.simSlot;
    await checkBinding(tx, brandId, deviceId, simSlot);
    await conflictOnNumber(() =>
      updateAccount(tx, accountId, {
        ...(patch.number !== undefined && { number: patch.number }),
        ...(patch.accountType !== undefined && { account_type: patch.accountType }),
        ...(patch.label !== undefined && { label: patch.label }),
        ...(patch.dailyLimit !== undefined && { daily_limit: patch.dailyLimit }),
        ...(patch.enabled !== undefined && { enabled: patch.enabled }),
        device_id: deviceId,
        sim_slot: simSlot,
      }),
    );
    const after = toView((await accountById(tx, accountId))!);
    return { result: after, audit: { action: 'wallet_account.update', targetType: 'wallet_account', targetId: accountId, brandId, before: state(before), after: state(after) } };
  });
}

/** Only an account nothing was paid into can be deleted (CONFLICT otherwise: disable it instead). */
export async function deleteWalletAccount(em: Db, who: AuditActor, accountId: number): Promise<void> {
  await withAudit(em, who, async (tx) => {
    const row = await accountById(tx, accountId, { forUpdate: true });
    if (!row) throw new AppError('WALLET_ACCOUNT_NOT_FOUND');
    const brandId = row.brand_id;
    if (await accountHasTransactions(tx, accountId)) {
      throw new AppError('CONFLICT', 'Payments were made into this account: disable it instead (`enabled: false`)', { field: 'account_id' });
    }
    await deleteAccount(tx, accountId);
    return { result: undefined, audit: { action: 'wallet_account.delete', targetType: 'wallet_account', targetId: accountId, brandId, before: state(toView(row)) } };
  });
}

/** One account as the choice reads it. */
export interface AccountChoice {
  id: number;
  gatewayId: number;
  number: string;
  accountType: WalletAccountType;
  enabled: boolean;
  dailyLimit: string | null;
  usedToday: string;
  lastAssignedAt: Date | null;
  /** Already shown to this payment for its gateway. */
  assigned: boolean;
}

/**
 * Pure: the account a payment is told to pay into on one gateway, among the
 * brand's accounts of that gateway. The one already shown to it stays (the
 * customer may have sent money there already), even if disabled or full since.
 * Otherwise an enabled account whose daily limit leaves room for `amountToSend`,
 * the one shown least recently first (round robin), then the oldest. Null:
 * none can take it (every account disabled or full).
 */
export function chooseAccount(accounts: readonly AccountChoice[], amountToSend: string): AccountChoice | null {
  const shown = accounts.find((a) => a.assigned);
  if (shown) return shown;
  const room = accounts.filter((a) => a.enabled && (a.dailyLimit === null || compareMoney(addMoney(a.usedToday, amountToSend), a.dailyLimit) <= 0));
  const at = (a: AccountChoice) => a.lastAssignedAt?.getTime() ?? -Infinity;
  return [...room].sort((a, b) => at(a) - at(b) || a.id - b.id)[0] ?? null;
}

/**
 * Where the customer pays on a gateway: `account` (one of the brand's), `none`
 * (the brand has accounts on the gateway but none can take this payment now:
 * the gateway is not offered), or `gateway` (the brand has no account of its
 * own there: the gateway's own receiving number, as before accounts existed).
 */
export type PayInto = { kind: 'account'; account: AccountChoice } | { kind: 'none' } | { kind: 'gateway' };

/**
 * The account each of `gateways` tells this payment to pay into, choosing
 * (and recording, with the round robin's clock) the ones not chosen before.
 * A concurrent page load that chose first wins: its choice is read back.
 */
export async function payInto(
  db: Db,
  q: { brandId: number; intentId: number; gateways: ReadonlyArray<{ id: number; amountToSend: string }> },
): Promise<Map<number, PayInto>> {
  const read = async () => {
    const rows = await assignmentChoices(db, { brandId: q.brandId, intentId: q.intentId, gatewayIds: q.gateways.map((g) => g.id) });
    return rows.map((r): AccountChoice => ({
      id: r.id, gatewayId: r.gateway_id, number: r.number, accountType: r.account_type, enabled: r.enabled, dailyLimit: r.daily_limit,
      usedToday: r.used_today, lastAssignedAt: r.last_assigned_at, assigned: r.assigned,
    }));
  };
  let all = await read();
  const out = new Map<number, PayInto>();
  for (let attempt = 0; attempt < 2; attempt++) {
    let raced = false;
    for (const g of q.gateways) {
      const own = all.filter((a) => a.gatewayId === g.id);
      if (own.length === 0) {
        out.set(g.id, { kind: 'gateway' });
        continue;
      }
      const chosen = chooseAccount(own, g.amountToSend);
      if (!chosen) {
        out.set(g.id, { kind: 'none' });
        continue;
      }
      if (!chosen.assigned && !(await insertAssignment(db, { intentId: q.intentId, gatewayId: g.id, accountId: chosen.id }))) raced = true;
      out.set(g.id, { kind: 'account', account: { ...chosen, assigned: true } });
    }
    if (!raced) return out;
    all = await read();
  }
  return out;
}
