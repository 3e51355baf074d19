import { describe, expect, it } from 'vitest';
import { chooseAccount, type AccountChoice } from '../../server/domain/wallet-accounts/service.ts';
import { accountContradiction } from '../../server/domain/sms/matching/matcher.ts';
import { chainWalletKey, firstLinkState, sameWalletOtherSim } from '../../server/domain/sms/matching/balance-chain.ts';

const account = (id: number, over: Partial<AccountChoice> = {}): AccountChoice => ({
  id, gatewayId: 1, number: `0171100000${id}`, accountType: 'personal', enabled: true, dailyLimit: null, usedToday: '0.00', lastAssignedAt: null, assigned: false, ...over,
});

describe('chooseAccount', () => {
  it('keeps the account already shown to the payment, even disabled or full', () => {
    const shown = account(2, { assigned: true, enabled: false, dailyLimit: '10.00', usedToday: '10.00' });
    expect(chooseAccount([account(1), shown], '500.00')).toBe(shown);
  });
  it('takes the least recently shown enabled account with room, then the oldest', () => {
    const a = account(1, { lastAssignedAt: new Date('2026-11-28T10:00:00Z') });
    const b = account(2, { lastAssignedAt: new Date('2026-11-28T09:00:00Z') });
    const never = account(3);
    expect(chooseAccount([a, b, never], '1.00')!.id).toBe(3);
    expect(chooseAccount([a, b], '1.00')!.id).toBe(2);
    expect(chooseAccount([account(5), account(4)], '1.00')!.id).toBe(4);
  });
  it('skips a disabled account and one whose daily limit the amount would pass; exactly reaching it is allowed', () => {
    const full = account(1, { dailyLimit: '1000.00', usedToday: '600.00' });
    const off = account(2, { enabled: false });
    expect(chooseAccount([full, off], '400.01')).toBeNull();
    expect(chooseAccount([full, off], '400.00')!.id).toBe(1);
  });
});

describe('accountContradiction (rule 3b)', () => {
  const bound = { number: '01711000001', deviceId: 7, simSlot: 1 };
  it('nothing to compare without an account or an arrival', () => {
    expect(accountContradiction(undefined, bound)).toBeNull();
    expect(accountContradiction({ deviceId: 9, simSlot: 0, receivingNumber: '01999000000' }, null)).toBeNull();
  });
  it("another phone, another known slot, or another readable receiving number contradicts", () => {
    expect(accountContradiction({ deviceId: 8, simSlot: 1, receivingNumber: null }, bound)).toMatch(/phone 8/);
    expect(accountContradiction({ deviceId: 7, simSlot: 0, receivingNumber: null }, bound)).toMatch(/slot 0/);
    expect(accountContradiction({ deviceId: 7, simSlot: 1, receivingNumber: '01811000001' }, bound)).toMatch(/01811000001/);
  });
  it('an unknown slot, the same number in another spelling, an unreadable number, or an unbound account do not', () => {
    expect(accountContradiction({ deviceId: 7, simSlot: null, receivingNumber: null }, bound)).toBeNull();
    expect(accountContradiction({ deviceId: 7, simSlot: 1, receivingNumber: '+880 1711-000001' }, bound)).toBeNull();
    expect(accountContradiction({ deviceId: 7, simSlot: 1, receivingNumber: '12' }, bound)).toBeNull();
    expect(accountContradiction({ deviceId: 3, simSlot: 4, receivingNumber: null }, { number: '01711000001', deviceId: null, simSlot: null })).toBeNull();
  });
});

describe('chains per SIM', () => {
  it('names a chain by wallet and slot, the unknown slot as the wallet itself', () => {
    expect(chainWalletKey('name:bkash', null)).toBe('name:bkash');
    expect(chainWalletKey('name:bkash', 1)).toBe('name:bkash/sim1');
    expect(chainWalletKey('x'.repeat(64), 1)).toHaveLength(64);
  });
  it('knows the same wallet on another slot of the phone', () => {
    expect(sameWalletOtherSim('name:bkash/sim1', 'name:bkash/sim0')).toBe(true);
    expect(sameWalletOtherSim('name:bkash/sim1', 'name:bkash')).toBe(true);
    expect(sameWalletOtherSim('name:bkash/sim1', 'name:bkash/sim1')).toBe(false);
    expect(sameWalletOtherSim('name:bkash/sim1', 'name:nagad/sim1')).toBe(false);
  });
  it("trusts a new SIM's first balance only when no other slot has the wallet's chain or an account names the slot", () => {
    expect(firstLinkState({ simSlot: 1, pinned: false, otherSimHasChain: true })).toBe('new_sim');
    expect(firstLinkState({ simSlot: 1, pinned: true, otherSimHasChain: true })).toBe('first');
    expect(firstLinkState({ simSlot: 1, pinned: false, otherSimHasChain: false })).toBe('first');
    expect(firstLinkState({ simSlot: null, pinned: false, otherSimHasChain: true })).toBe('first');
  });
});
