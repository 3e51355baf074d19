/**
 * The add-operator form's brand list: comma-separated brand ids. Empty means
 * every brand (`null`), so anything else that does not read as positive whole
 * numbers must be refused, never widened to every brand.
 */
export type BrandListParse = { ok: true; ids: number[] | null } | { ok: false; error: string };

export function parseBrandList(text: string): BrandListParse {
  if (text.trim() === '') return { ok: true, ids: null };
  const parts = text.split(',').map((p) => p.trim());
  const bad = parts.filter((p) => !/^[1-9][0-9]{0,9}$/.test(p) || !Number.isSafeInteger(Number(p)));
  if (bad.length > 0) return { ok: false, error: `Not a brand id: ${bad.map((b) => JSON.stringify(b)).join(', ')}. Give brand ids separated by commas, or leave empty for every brand.` };
  return { ok: true, ids: [...new Set(parts.map(Number))] };
}
