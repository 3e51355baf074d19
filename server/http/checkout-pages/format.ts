/** Display helpers of the checkout pages; the ones receipts share live in server/domain/display.ts. */
export { formatAmount, formatMoment as formatDeadline } from '../../domain/display.ts';

/** First letter of the brand name for its badge (a letter or digit; else a dot). */
export function initialOf(name: string): string {
  const m = /[\p{L}\p{N}]/u.exec(name);
  return m ? m[0].toUpperCase() : '•';
}
