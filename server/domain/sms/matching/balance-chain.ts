import { addMoney, compareMoney, subMoney } from '../../money/decimal.ts';
import type { ChainState } from './matcher.ts';
import { normalizeSender } from '../templates/parser.ts';
import { senderKey } from '../templates/senders.ts';

/**
 * The balance chain (docs/matching.md, "Balance chain"): per device and
 * wallet, every transaction SMS of an official sender reports the balance
 * after it, so each one must follow from the one before it by SMS time:
 * previous + amount - fee for money in, previous - amount - fee for money out.
 * A forged "received Tk 20,000 ... Balance Tk 1.00" cannot follow, whatever
 * the trx id it names.
 */

export interface ChainReading {
  direction: 'in' | 'out';
  amount: string;
  fee: string | null;
  balance: string | null;
  balanceUnreadable: boolean;
}

export interface ChainVerdict {
  state: ChainState;
  previousId: number | null;
  /** What the balance should have been after the previous message, when it is known. */
  expected: string | null;
  /** The balance after this SMS as the chain counts it (stated, or derived for a debit stating none); null: not a link. */
  balance: string | null;
}

/** Links a later SMS may follow as trusted evidence; every other state leaves the chain untrusted until repaired. */
const TRUSTED: ReadonlySet<string> = new Set(['first', 'follows', 'repaired']);

/** True when the chain's head after this link is broken (and so untrusted). */
export function breaksChain(state: ChainState): boolean {
  return state !== null && !TRUSTED.has(state);
}

/**
 * Whether a stored link is trusted evidence for the next one: its own state is
 * trusted, or an operator verified it (a person checked the wallet, so its
 * balance is real whatever the chain said).
 */
export function linkTrusted(state: ChainState, resolution: string | null): boolean {
  return (state !== null && TRUSTED.has(state)) || resolution === 'verified';
}

/**
 * One chain per phone and wallet, whatever sender id the wallet used: the
 * official senders of the gateways are joined into wallets (two senders of one
 * gateway, or two gateways sharing a sender, are one wallet), and the wallet is
 * named by its first sender key, names before numbers (`name:bkash` for bKash's
 * `bKash` and `16247`). A forgery through a wallet's second sender id thus meets
 * the same chain as the first's. A sender of no gateway is its own wallet.
 */
export function walletKey(sender: string, gateways: ReadonlyArray<{ senders: readonly string[] }> = []): string {
  const own = senderKey(sender);
  if (own === null) return normalizeSender(sender).slice(0, 64);
  const wallet = new Set([own]);
  const groups = gateways.map((g) => g.senders.map(senderKey).filter((k): k is string => k !== null));
  for (let grew = true; grew; ) {
    grew = false;
    for (const keys of groups) {
      if (!keys.some((k) => wallet.has(k))) continue;
      for (const k of keys) if (!wallet.has(k)) grew = wallet.add(k) !== null;
    }
  }
  const named = (k: string) => (k.startsWith('name:') ? 0 : 1);
  return [...wallet].sort((a, b) => named(a) - named(b) || (a < b ? -1 : a > b ? 1 : 0))[0]!.slice(0, 64);
}

/** Separates a wallet from its SIM slot in a chain key (`name:bkash/sim1`). */
const SIM_SEPARATOR = '/sim';

/**
 * The chain an SMS belongs to (docs/matching.md, "Balance chain"): one per
 * phone, SIM slot and wallet. A phone that does not say the slot keeps one
 * chain per wallet (`wallet` itself), as before slots were read.
 */
export function chainWalletKey(wallet: string, simSlot: number | null): string {
  return simSlot === null ? wallet : `${wallet.slice(0, 64 - SIM_SEPARATOR.length - 1)}${SIM_SEPARATOR}${simSlot}`;
}

/** Whether two chain keys are the same wallet on different SIMs of a phone (or on a SIM and on an unknown slot). */
export function sameWalletOtherSim(a: string, b: string): boolean {
  if (a === b) return false;
  const base = (k: string) => {
    const i = k.lastIndexOf(SIM_SEPARATOR);
    return i >= 0 && /^\d$/.test(k.slice(i + SIM_SEPARATOR.length)) ? k.slice(0, i) : k;
  };
  return base(a) === base(b);
}

/**
 * A chain's first link is trusted (`first`) like a new phone's first SMS,
 * except on a SIM slot of a phone that already has this wallet's chain on
 * another slot, when no wallet account names the slot: a forgery sent to the
 * phone's other SIM would otherwise start a trusted chain of its own. Such a
 * first link is `new_sim`, untrusted until a person verifies one of its SMS.
 */
export function firstLinkState(q: { simSlot: number | null; pinned: boolean; otherSimHasChain: boolean }): 'first' | 'new_sim' {
  return q.simSlot !== null && !q.pinned && q.otherSimHasChain ? 'new_sim' : 'first';
}

/** The balance after `r` if the balance before it was `previous`. */
export function expectedAfter(previous: string, r: Pick<ChainReading, 'direction' | 'amount' | 'fee'>): string {
  const fee = r.fee ?? '0';
  return r.direction === 'in' ? subMoney(addMoney(previous, r.amount), fee) : subMoney(subMoney(previous, r.amount), fee);
}

/** The previous link as the chain rule reads it: its balance, and whether it is trusted (linkTrusted). */
export interface PreviousLink {
  balance: string;
  trusted: boolean;
}

/**
 * Pure: the chain state of a reading given the previous link (null when none).
 * - `unreadable`: the template read a balance that is not a number.
 * - `missing`: a credit without a balance on a chain whose messages carry
 *   balances (there is a previous link): its format should have said one.
 * - `impossible`: a balance below zero, or a credit whose balance is below what
 *   it alone brought in (the wallet would have been negative before it), known
 *   without any previous link.
 * - `mismatch`: it does not follow the previous link, or a later link decided
 *   before it does not follow from it (the chain forked here).
 * - `follows` / `after_break`: it follows a trusted / an untrusted previous
 *   link. A chain that broke stays untrusted, link after link, until an
 *   operator verifies one of its SMS or a later-arriving SMS repairs it.
 */
export function chainState(
  r: ChainReading,
  previous: PreviousLink | null,
  next: (Pick<ChainReading, 'direction' | 'amount' | 'fee'> & { balance: string }) | null = null,
): { state: ChainState; expected: string | null; balance: string | null } {
  if (r.balanceUnreadable) return { state: 'unreadable', expected: null, balance: null };
  const forks = (balance: string) => next !== null && compareMoney(expectedAfter(balance, next), next.balance) !== 0;
  if (r.balance === null) {
    if (r.direction === 'in') return { state: previous !== null ? 'missing' : null, expected: null, balance: null };
    // A debit whose wallet states no balance in it (Rocket's bill pay): read as what it is, the previous
    // balance less the debit, so the next SMS is checked against what the wallet holds after it.
    if (previous === null) return { state: null, expected: null, balance: null };
    const derived = expectedAfter(previous.balance, r);
    // Below zero: money came in that the chain never saw (a missed SMS), or the debit is not genuine.
    if (compareMoney(derived, '0') < 0 || forks(derived)) return { state: 'mismatch', expected: derived, balance: derived };
    return { state: previous.trusted ? 'follows' : 'after_break', expected: derived, balance: derived };
  }
  const balance = r.balance;
  if (compareMoney(balance, '0') < 0) return { state: 'impossible', expected: null, balance };
  if (r.direction === 'in' && compareMoney(balance, subMoney(r.amount, r.fee ?? '0')) < 0) return { state: 'impossible', expected: null, balance };
  // A later SMS decided before this one (out-of-order delivery) must follow from it too, or the chain forked here.
  if (forks(balance)) return { state: 'mismatch', expected: previous === null ? null : expectedAfter(previous.balance, r), balance };
  if (previous === null) return { state: 'first', expected: null, balance };
  const expected = expectedAfter(previous.balance, r);
  if (compareMoney(expected, balance) === 0) return { state: previous.trusted ? 'follows' : 'after_break', expected, balance };
  return { state: 'mismatch', expected, balance };
}

/**
 * A later link that this SMS repairs: it was untrusted because the chain broke
 * before it (`mismatch`, `after_break`), and it follows from this trusted SMS
 * (the fork check of chainState), which arrived late and filled the gap.
 */
export function repairs(verdict: ChainState, next: { state: ChainState; resolution: string | null } | null): boolean {
  return (verdict === 'first' || verdict === 'follows') && next !== null && (next.state === 'mismatch' || next.state === 'after_break');
}
