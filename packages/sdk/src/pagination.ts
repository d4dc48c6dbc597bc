// Walks a list endpoint page by page until the end.

export interface PageQuery {
  page?: number;
  limit?: number;
}

interface Page<T> {
  items: T[];
  page: number;
  page_size: number;
  total_pages?: number | null;
}

/** Yields every item of every page from `query.page` (default 0) on. */
export async function* iteratePages<Q extends PageQuery, T>(
  fetchPage: (query: Q) => Promise<Page<T>>,
  query: Q,
): AsyncGenerator<T, void, undefined> {
  // A limit of 0 returns counts only and would never advance, so walking uses the default.
  const limit = query.limit || 100;
  for (let page = query.page ?? 0; ; page += 1) {
    const result = await fetchPage({ ...query, page, limit });
    yield* result.items;
    const lastPage = result.total_pages == null ? null : result.total_pages - 1;
    if (result.items.length < limit || (lastPage !== null && page >= lastPage)) return;
  }
}
