// Walks a list endpoint page by page until the end, following each page's next_cursor.

export interface PageQuery {
  page?: number;
  limit?: number;
  cursor?: string;
}

interface Page<T> {
  items: T[];
  next_cursor?: string | null;
}

/**
 * Yields every item of every page from the page `query` asks for (by default the first) on. After
 * the first page it follows `next_cursor`, so each page costs the same at any depth and records
 * added during the walk cause no duplicates or skips.
 */
export async function* iteratePages<Q extends PageQuery, T>(
  fetchPage: (query: Q) => Promise<Page<T>>,
  query: Q,
): AsyncGenerator<T, void, undefined> {
  // A limit of 0 returns counts only and would never advance, so walking uses the default.
  const limit = query.limit || 100;
  let result = await fetchPage({ ...query, limit });
  for (;;) {
    yield* result.items;
    if (!result.next_cursor) return;
    result = await fetchPage({ ...query, limit, page: undefined, cursor: result.next_cursor });
  }
}
