/** One page of a list: the items and the list's `meta` (`page`, `per_page`, `total`, maybe `total_pages`). */
export interface Page<T, M = PageMetaLike> {
  data: T[];
  meta: M;
}

export interface PageMetaLike {
  page?: number;
  per_page?: number;
  total?: number;
  total_pages?: number;
}

/** Number of the page after `meta`, or null when `meta` describes the last page. */
export function nextPageNumber(meta: unknown, itemsOnPage: number): number | null {
  const m = (meta ?? {}) as PageMetaLike;
  if (itemsOnPage === 0 || typeof m.page !== 'number') return null;
  const totalPages =
    typeof m.total_pages === 'number'
      ? m.total_pages
      : typeof m.total === 'number' && typeof m.per_page === 'number' && m.per_page > 0
        ? Math.ceil(m.total / m.per_page)
        : null;
  // Without totals, a short page is the last one.
  if (totalPages === null) return typeof m.per_page === 'number' && itemsOnPage < m.per_page ? null : m.page + 1;
  return m.page < totalPages ? m.page + 1 : null;
}

/**
 * Walks a page-numbered list from `params.page` (default 1) to its last page,
 * one request per page, only as fast as the caller consumes. Page numbers are
 * offsets: rows created while iterating can shift items across pages, so an item
 * may be seen twice or missed; filter by a fixed `to` date for a stable export.
 */
export async function* paginate<O, T, M>(
  fetchPage: (params: Record<string, unknown>, options: O | undefined) => Promise<Page<T, M>>,
  params: Record<string, unknown> | undefined,
  options: O | undefined,
): AsyncGenerator<Page<T, M>, void, undefined> {
  let page: number = params?.page === undefined ? 1 : Number(params.page);
  for (;;) {
    const result = await fetchPage({ ...params, page }, options);
    yield result;
    const next = nextPageNumber(result.meta, Array.isArray(result.data) ? result.data.length : 0);
    if (next === null || next <= page) return;
    page = next;
  }
}
