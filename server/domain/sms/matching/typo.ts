import type { MatchCandidate, Suggestion } from './matcher.ts';

/**
 * Typo suggestions (docs/matching.md, "Typos and near misses"): when nobody
 * claims an SMS's trx id, the open payments with its amount are listed for a
 * person, those whose claimed id is one or two edits away first. Characters
 * customers confuse when copying an id from an SMS (O/0, I/1, S/5, B/8) cost
 * half an edit, so such a slip ranks closer than any other.
 */

/** Also the furthest a person may correct a claimed id to an SMS's (review.ts). */
export const MAX_SUGGESTED_DISTANCE = 2;

const CONFUSABLE: ReadonlyArray<readonly [string, string]> = [
  ['O', '0'],
  ['I', '1'],
  ['S', '5'],
  ['B', '8'],
];

function substitutionCost(a: string, b: string): number {
  if (a === b) return 0;
  return CONFUSABLE.some(([x, y]) => (a === x && b === y) || (a === y && b === x)) ? 0.5 : 1;
}

/**
 * Edit distance (insertions, deletions, substitutions and swaps of two
 * neighbours, optimal string alignment) with confusable substitutions at 0.5.
 * Case-insensitive: ids are compared upper-cased everywhere.
 */
export function idDistance(left: string, right: string): number {
  const a = left.trim().toUpperCase();
  const b = right.trim().toUpperCase();
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + substitutionCost(a[i - 1]!, b[j - 1]!));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * `open` (same amount, open, in the window) as suggestions: claimed ids within
 * MAX_SUGGESTED_DISTANCE first, closest first; then those with no claimed id
 * yet; then the rest. Ties keep the oldest transaction first.
 */
export function rankByIdCloseness(trxId: string, open: readonly MatchCandidate[]): Suggestion[] {
  const scored = open.map((c) => {
    const claimed = c.gatewayTrxId !== null && c.gatewayTrxId.trim() !== '' ? c.gatewayTrxId : null;
    const distance = claimed === null ? null : idDistance(claimed, trxId);
    const near = distance !== null && distance <= MAX_SUGGESTED_DISTANCE;
    const rank = near ? 0 : claimed === null ? 1 : 2;
    const why = near
      ? `same amount; claimed id ${claimed} is ${distance} edit(s) from the SMS's id`
      : claimed === null
        ? 'same amount; no id claimed yet'
        : `same amount; claimed id ${claimed} is not close to the SMS's id`;
    return { c, distance, rank, why };
  });
  scored.sort((x, y) => x.rank - y.rank || (x.distance ?? 0) - (y.distance ?? 0) || x.c.id - y.c.id);
  return scored.map(({ c, distance, why }) => ({ transactionId: c.id, why, distance }));
}
