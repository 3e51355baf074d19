/**
 * Arrays bound as one parameter: `= ANY(?::bigint[])` with a literal such as
 * `{1,2,3}`. MikroORM's `execute` expands a JS array into a list of
 * placeholders (`IN (?)`), which is not an array and cannot be planned as one
 * lookup; an empty list stays a valid (empty) array here.
 */

/** `{1,2,3}` for `?::bigint[]`. */
export function pgIdArray(ids: readonly number[]): string {
  return `{${ids.map((id) => String(Math.trunc(id))).join(',')}}`;
}

/** `{ab12,...}` for `?::varchar[]`, of hex digests only (nothing to quote); throws on anything else. */
export function pgHexArray(values: readonly string[]): string {
  for (const v of values) if (!/^[0-9a-f]+$/.test(v)) throw new Error('pgHexArray takes hex digests only');
  return `{${values.join(',')}}`;
}
