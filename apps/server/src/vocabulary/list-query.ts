// What a list query is once parsed: the shapes the list rules (domain/list-query.ts) produce and
// the list SQL (db/engine/list-sql.ts) and each list's repository read.

/** How a search value matches a property. */
export type PropertyKind =
  | 'text' // case-insensitive substring
  | 'exact' // case-sensitive equality (name_exact)
  | 'text_either' // case-insensitive substring of either of two fields (name_description)
  | 'integer' // equality with an integer value
  | 'boolean' // equality with true or false
  | 'datetime' // prefix of the ISO text
  | 'json'; // case-insensitive substring of the JSON text

export type SortDirection = 'asc' | 'desc';

/** Where a page ends in its order: the last item's value of the ordered property and its id. */
export interface ListPosition {
  value: string | number | boolean | null;
  id: number;
  /**
   * `value` is only the start of a long text (a cursor carries no more: domain/list-query.ts);
   * the whole is the value of the item `id`, which the page's read takes up again.
   */
  cut?: true;
}

/** One page of a list's records, with how many match in all and where the next page starts. */
export interface ListedPage<R> {
  records: R[];
  totalCount: number;
  /** Null on the last page. */
  next: ListPosition | null;
}

export type SearchValue = string | number | boolean;

export interface SearchFilter<P extends string> {
  property: P;
  kind: PropertyKind;
  value: SearchValue;
}

export interface ListQuery<P extends string> {
  page: number;
  limit: number;
  offset: number;
  filters: SearchFilter<P>[];
  order: { property: P; direction: SortDirection };
  /** The ordered property's kind: what a cursor's value is (domain/list-query.ts, encodeCursor). */
  orderKind: PropertyKind;
  /** Item keys to keep, or null for all. */
  projection: ReadonlySet<string> | null;
  /** Inclusive start and exclusive end, as canonical ISO text. */
  window: { start?: string; end?: string };
  /** With a cursor: the page starts right after this position (and `offset` is 0). */
  after: ListPosition | null;
  /** Names the organization, list, filters, window and order that a cursor is bound to. */
  walk: string;
}
