/**
 * MikroORM's PostgreSQL driver hands raw-query timestamps back as text (so that
 * entity hydration controls the conversion); rows read with em.execute convert here.
 */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  const d = new Date(String(value));
  if (Number.isNaN(d.getTime())) throw new Error(`not a timestamp: ${String(value)}`);
  return d;
}

export function toDateStrict(value: unknown): Date {
  const d = toDate(value);
  if (!d) throw new Error('timestamp is null');
  return d;
}
