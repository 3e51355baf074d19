/**
 * Building blocks of the preset templates (all used with the `i` flag). Every
 * quantifier is bounded, so a long hostile body cannot make a template backtrack
 * for long: presets use lookahead, which RE2 lacks, so they run on V8's engine.
 */
export const CUR = String.raw`(?:tk\.?|bdt|৳)`;
const NUM = String.raw`\d[\d,]{0,15}(?:\.\d{1,2})?`;
/** Plain digits or comma-grouped digits (western or South Asian), up to two decimals. */
const STRICT_NUM = String.raw`(?:\d{1,3}(?:,\d{2,3}){1,6}|\d{1,16})(?:\.\d{1,2})?(?!\d|,\d)`;
/** Loose on purpose: `normalizeParsedAmount` checks grouping and places. */
export const AMOUNT = String.raw`(?<amount>${NUM})`;
/** Strict, because the balance chain trusts it: `1,2,3,4` is no balance and the message no wallet's. */
export const BALANCE = String.raw`(?<balance>${STRICT_NUM})`;
export const FEE = String.raw`(?<fee>${STRICT_NUM})`;
/** The payer as the wallet writes it: full, or masked (`***515`, `01XXXXXX515`). */
export const SENDER_NUMBER = String.raw`(?<sender_number>\+?[\dx*]{3,15})`;
/** `22/01/2026 01:54` */
export const DMY_TIME = String.raw`(?<time>\d{2}/\d{2}/\d{4}\s+\d{1,2}:\d{2})`;
/**
 * Free text the payer may have written (a reference). Greedy, so the LAST
 * transaction id wins: the genuine one comes after the customer's text, which
 * could contain a fake "TrxID ..." of its own.
 */
export const GAP = String.raw`[\s\S]{0,300}`;
export const trx = (chars: string, min: number, max: number) => String.raw`(?<trx_id>${chars}{${min},${max}})\b`;
