// Turns a parsed list query (domain/list-query.ts) into SQL conditions and an ORDER BY, for any
// table: a repository maps each property to a column or SQL expression and gets the rest here.
// Both backends get the same results: the functions take the database's spelling (client.ts),
// and a repository maps a JSON column to its text (`spelling.jsonText`).

import { Column, is, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { ListPosition, ListQuery, SearchFilter } from '../../vocabulary/list-query.js';
import { orderPrefix } from '../schema/order-prefix.js';
import type { Db } from './client.js';
import type { Spelling } from './spelling.js';
import { idEquals, renderedSql, selectRows, valueSql, type Steps } from './portable-sql.js';

export type ColumnMap<P extends string> = Record<P, SQLWrapper>;

const renderedOnce = new WeakMap<object, Map<string, SQL>>();

/**
 * `build()`'s SQL as text rendered once per backend, `owner` and `key`, for a part of a statement
 * that code fixes (a list's select list and FROM clause): rendering a dozen fields each time cost
 * a list more than its read of a small page (docs/benchmarks.md, "Figures behind the code"). Kept
 * as built instead when it binds a value. `owner` and `key` come from code, never from a request,
 * so what is kept is bounded by the code.
 */
export function renderedOnceSql(
  kind: Db['kind'],
  owner: object,
  key: string,
  build: () => SQL,
): SQL {
  let byKey = renderedOnce.get(owner);
  if (!byKey) renderedOnce.set(owner, (byKey = new Map<string, SQL>()));
  const kindKey = `${kind} ${key}`;
  let kept = byKey.get(kindKey);
  if (!kept) {
    const built = build();
    const { sql: text, params } = renderedSql(built, kind);
    kept = params.length === 0 ? sql.raw(text) : built;
    byKey.set(kindKey, kept);
  }
  return kept;
}

/** The largest code point: every text starting with the prefix sorts below prefix + this. */
const AFTER_PREFIX = '\u{10FFFF}';

export function filterCondition<P extends string>(
  filter: SearchFilter<P>,
  columns: ColumnMap<P>,
  spelling: Spelling,
  either?: EitherSearch,
): SQL | undefined {
  const column = columns[filter.property];
  switch (filter.kind) {
    case 'text':
    case 'json':
      return spelling.contains(column, String(filter.value));
    case 'text_either': {
      const [first, second] = either?.columns ?? [column, column];
      const half = either?.half ?? ((condition: SQL) => condition);
      return or(
        half(spelling.contains(first, String(filter.value))),
        half(spelling.contains(second, String(filter.value))),
      );
    }
    case 'datetime':
      // A range instead of LIKE 'prefix%', so an index on the column serves it.
      return sql`${column} >= ${String(filter.value)} AND ${column} < ${`${String(filter.value)}${AFTER_PREFIX}`}`;
    case 'exact':
      return sql`${column} = ${filter.value}`;
    case 'integer':
      // Compared as bigint: a value beyond PostgreSQL's integer columns then matches nothing, as
      // on SQLite, instead of failing to bind (the parser allows safe integers).
      return idEquals(column, Number(filter.value));
    case 'boolean':
      return sql`${column} = ${valueSql(filter.value)}`;
  }
}

/** The two columns a `text_either` property searches (name_description). */
export interface EitherSearch {
  columns: readonly [SQLWrapper, SQLWrapper];
  /**
   * How each column's half of the OR is tested (default: as it is). SQLite can seek no index for
   * an OR of substrings, so it reads the table's row for every one of the organization's rows;
   * listWhere has it test each half in that column's own index instead (an `IN` subquery
   * each, both columns being indexed for their orders), which reads a fourth as much.
   */
  half?: (condition: SQL) => SQL;
}

export interface ListSqlOptions<P extends string> {
  columns: ColumnMap<P>;
  /** The column the time window applies to (a list without one takes no window parameters). */
  windowColumn?: SQLWrapper;
  either?: EitherSearch;
  /**
   * A property's own condition among the organization's rows, for when its column would be slow
   * to search; returning undefined falls back to searching the column.
   */
  conditions?: Partial<Record<P, OwnSearch<P>>>;
  /** Searches that find their rows' keys elsewhere (keySearches), with the key they give. */
  keyed?: { primaryKey: SQLWrapper; searches: KeySearches<P> };
  /** The database's spelling: the same search renders differently on each. */
  spelling: Spelling;
}

/** SQL of a property's search among the organization's rows, or undefined for the column's. */
export type OwnSearch<P extends string> = (
  filter: SearchFilter<P>,
  organizationId: number,
) => SQL | undefined;

/**
 * For each property whose rows are found from another table (an experiment's from its variants):
 * a SELECT of the matching rows' primary keys, or undefined to search the column. A query's
 * key searches are intersected into one `IN`: two `IN`s of the same key would each take a column
 * of SQLite's index on (organization, id), whose last column, the rowid, is the id again, and it
 * would then seek every pair of the two lists' keys: minutes where the intersection takes a
 * fraction of a second (docs/benchmarks.md, "Figures behind the code").
 */
export type KeySearches<P extends string> = Partial<Record<P, OwnSearch<P>>>;

/** The conditions of `query`'s searches and window among the organization's rows. */
export function listConditions<P extends string>(
  query: Pick<ListQuery<P>, 'filters' | 'window'>,
  organizationId: number,
  options: ListSqlOptions<P>,
): SQL[] {
  const conditions: SQL[] = [];
  const keys: SQL[] = [];
  for (const filter of query.filters) {
    const matchingKeys = options.keyed?.searches[filter.property]?.(filter, organizationId);
    if (matchingKeys) {
      keys.push(matchingKeys);
      continue;
    }
    const condition =
      options.conditions?.[filter.property]?.(filter, organizationId) ??
      filterCondition(filter, options.columns, options.spelling, options.either);
    if (condition) conditions.push(condition);
  }
  if (keys.length > 0) {
    conditions.push(sql`${options.keyed!.primaryKey} IN (${sql.join(keys, sql` INTERSECT `)})`);
  }
  const { windowColumn } = options;
  if (windowColumn && query.window.start) {
    conditions.push(sql`${windowColumn} >= ${query.window.start}`);
  }
  if (windowColumn && query.window.end) conditions.push(sql`${windowColumn} < ${query.window.end}`);
  return conditions;
}

/**
 * ORDER BY the chosen property, then the primary key in the same direction so pages are stable,
 * with NULL first ascending and last descending on both backends (spelling.orderTerm).
 */
export function listOrder<P extends string>(
  query: Pick<ListQuery<P>, 'order'>,
  columns: ColumnMap<P>,
  primaryKey: SQLWrapper,
  spelling: Spelling,
): SQL {
  const { direction, property } = query.order;
  return sql`${spelling.orderTerm(columns[property], direction)}, ${spelling.orderTerm(primaryKey, direction)}`;
}

/** `ordered` (listOrder's ORDER BY of a long text) read through the text's indexed prefix. */
export function prefixedOrder(
  column: SQLWrapper,
  direction: ListQuery<string>['order']['direction'],
  ordered: SQL,
  spelling: Spelling,
): SQL {
  return sql`${spelling.orderTerm(orderPrefix(column), direction)}, ${ordered}`;
}

/** A long text a list orders through its indexed prefix on PostgreSQL (schema/order-prefix.ts). */
export interface PrefixOrdered {
  column: SQLWrapper;
  nullable: boolean;
}

/**
 * The page (`take` rows past `skip`) of `select ... WHERE conditions` in the ascending order of
 * a nullable long text (prefixedOrder's `ordered`), on PostgreSQL: two reads that each stop at
 * the page's end, those without the text in key order and then the others in the text's order,
 * merged. Read as one, the rows without it tie on their NULL prefix, and the order sorted every
 * one of them (by the whole text, NULL alike) to find the first few. `select` names the key "id"
 * and the text "sortKey". Null for any other order, which is read as one.
 */
export function nullsApart(
  long: PrefixOrdered | undefined,
  direction: ListQuery<string>['order']['direction'],
  read: { select: SQL; conditions: SQL | undefined; primaryKey: SQLWrapper; ordered: SQL },
  { skip, take }: { skip: number; take: number },
): SQL | null {
  if (!long?.nullable || direction !== 'asc') return null;
  const prefix = orderPrefix(long.column);
  const { select, conditions, primaryKey, ordered } = read;
  const where = (condition: SQL) => (conditions ? sql`${conditions} AND ${condition}` : condition);
  return sql`SELECT * FROM (
      (${select} WHERE ${where(sql`${prefix} IS NULL`)}
        ORDER BY ${prefix} NULLS FIRST, ${primaryKey} LIMIT ${skip + take})
      UNION ALL
      (${select} WHERE ${where(sql`${prefix} IS NOT NULL`)}
        ORDER BY ${ordered} LIMIT ${skip + take})
    ) AS "nearStart" ORDER BY "sortKey" ASC NULLS FIRST, "id" ASC LIMIT ${take} OFFSET ${skip}`;
}

/**
 * A bound on a long text's indexed prefix past a position (value), so that the page after it
 * starts with a seek into the prefix's index: the position alone compares the whole text, which
 * no index holds. Descending in a column that holds NULLs, the rows past a position end with
 * them, which no bound on the prefix takes in: that page walks the index from its start.
 */
export function prefixBound(
  column: SQLWrapper,
  direction: ListQuery<string>['order']['direction'],
  value: ListPosition['value'] | undefined,
  { nullable }: { nullable: boolean },
): SQL | undefined {
  if (value === null || value === undefined) return undefined;
  const bound = orderPrefix(sql`${String(value)}`);
  if (direction === 'asc') return sql`${orderPrefix(column)} >= ${bound}`;
  return nullable ? undefined : sql`${orderPrefix(column)} <= ${bound}`;
}

/**
 * Rows after `position` in the order listOrder gives, so a cursor page starts right after the
 * previous one whatever was added meanwhile: (column, primary key) past (value, id) in the
 * order's direction, with NULL first ascending and last descending. The row-value comparison
 * lets an index on (column, primary key) seek straight to the position.
 */
export function afterPosition<P extends string>(
  query: Pick<ListQuery<P>, 'order'>,
  columns: ColumnMap<P>,
  primaryKey: SQLWrapper,
  { value, id }: ListPosition,
): SQL {
  const column = columns[query.order.property];
  // NULLs sort last descending: past any value come the NULLs, unless the column has none.
  const orNull = is(column, Column) && column.notNull ? sql`` : sql` OR ${column} IS NULL`;
  if (query.order.direction === 'asc') {
    return value === null
      ? sql`((${column} IS NULL AND ${primaryKey} > ${id}) OR ${column} IS NOT NULL)`
      : sql`(${column}, ${primaryKey}) > (${valueSql(value)}, ${id})`;
  }
  return value === null
    ? sql`(${column} IS NULL AND ${primaryKey} < ${id})`
    : sql`((${column}, ${primaryKey}) < (${valueSql(value)}, ${id})${orNull})`;
}

/**
 * A cursor's position, whole. A cut one holds only the start of a long text: the value is read
 * again, in the page's own snapshot, from the item the position marks: the row of `from` with
 * the position's id as `primaryKey` that `ofOrganization` admits, its `column`. If that item was
 * deleted since, or its text no longer starts so, the start stands for it (the page may then
 * repeat items whose text starts the same: the spec's Cursor parameter says so).
 */
export function* wholePosition(
  position: ListPosition,
  {
    column,
    from,
    primaryKey,
    ofOrganization,
  }: Record<'column' | 'from' | 'primaryKey', SQLWrapper> & {
    ofOrganization: SQL;
  },
): Steps<ListPosition> {
  const { value, id } = position;
  if (!position.cut) return position;
  const [item] = yield* selectRows<{ value: unknown }>(
    sql`SELECT ${column} AS "value" FROM ${from} WHERE ${ofOrganization} AND ${idEquals(primaryKey, id)}`,
  );
  const whole = item?.value;
  return typeof whole === 'string' && whole.startsWith(value as string)
    ? { value: whole, id }
    : { value, id };
}

/**
 * The page after `query.after` (or at `query.offset`), one row more than the limit: the extra row
 * only tells whether a next page exists. Returns the conditions to add and the LIMIT/OFFSET.
 */
export function pageWindow<P extends string>(
  query: ListQuery<P>,
  columns: ColumnMap<P>,
  primaryKey: SQLWrapper,
): { after: SQL | undefined; limitOffset: SQL } {
  return {
    after: query.after ? afterPosition(query, columns, primaryKey, query.after) : undefined,
    limitOffset: sql`LIMIT ${query.limit + 1} OFFSET ${query.offset}`,
  };
}

/** The rows of a page without their sort key, and where the next page starts if there is one. */
export function pageOf<R extends { id: number; sortKey: unknown }>(
  shown: R[],
  hasMore: boolean,
): { rows: Array<Omit<R, 'sortKey'>>; next: ListPosition | null } {
  const last = shown[shown.length - 1];
  return {
    rows: shown.map(({ sortKey: _sortKey, ...row }) => row),
    next: hasMore && last ? { value: last.sortKey as ListPosition['value'], id: last.id } : null,
  };
}

/** A page read with pageWindow: its extra row only tells that a next page exists. */
export function splitPage<R extends { id: number; sortKey: unknown }>(read: R[], limit: number) {
  return pageOf(read.slice(0, limit), read.length > limit);
}

/** The same order in the other direction (NULLs move to the other end with it). */
export function reversedOrder<P extends string>(
  order: ListQuery<P>['order'],
): ListQuery<P>['order'] {
  return { ...order, direction: order.direction === 'asc' ? 'desc' : 'asc' };
}

/** How a page by number is read: `take` rows after skipping `skip` of the list in `order`. */
export interface NumberedPage<P extends string> {
  order: ListQuery<P>['order'];
  skip: number;
  take: number;
  /** Whether `order` is the query's reversed, so the rows read come last first. */
  reversed: boolean;
  /** Whether rows follow the page. */
  hasMore: boolean;
}

/**
 * How to read the page `query.offset` rows into a list of `totalCount` matches, or null for a
 * page past its end. An OFFSET skips rows one by one, so a page past the middle is read from the
 * other end, in the reverse order: the last page then costs what page 0 does. The count must be
 * of the same snapshot as the read (runListRead).
 */
export function numberedPage<P extends string>(
  query: Pick<ListQuery<P>, 'offset' | 'limit' | 'order'>,
  totalCount: number,
): NumberedPage<P> | null {
  const end = Math.min(query.offset + query.limit, totalCount);
  if (query.offset >= end) return null;
  const reversed = query.offset > totalCount - end;
  return {
    order: reversed ? reversedOrder(query.order) : query.order,
    skip: reversed ? totalCount - end : query.offset,
    take: end - query.offset,
    reversed,
    hasMore: end < totalCount,
  };
}
