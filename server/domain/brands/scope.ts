/**
 * The brand ids of a console operator's scope as one `IN (?)` parameter (the
 * driver expands an array into a list). An empty scope matches no brand: brand
 * ids start at 1, so 0 is never one.
 */
export function scopeParam(brandIds: readonly number[]): number[] {
  return brandIds.length ? [...brandIds] : [0];
}
