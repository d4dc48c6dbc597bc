// The list reader: what a list reads one organization's page of (a ListTable), the condition of
// its searches (listWhere) and the page with its count (selectListPage), on either database.

import { and, eq, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { ListPosition, ListQuery } from '../../vocabulary/list-query.js';
import type { Db } from './client.js';
import {
  filterCondition,
  listConditions,
  listOrder,
  nullsApart,
  numberedPage,
  pageOf,
  pageWindow,
  prefixBound,
  prefixedOrder,
  renderedOnceSql,
  splitPage,
  wholePosition,
  type KeySearches,
  type ListSqlOptions,
  type OwnSearch,
  type PrefixOrdered,
} from './list-sql.js';
import { selectList, selectRows, type Steps } from './portable-sql.js';

/**
 * What a list reads one organization's page of, for selectListPage: a module constant (or one
 * per database handle), as its select list and FROM clause are rendered once per table
 * (renderedOnceSql).
 */
export interface ListTable<P extends string> extends Omit<
  ListSqlOptions<P>,
  'spelling' | 'keyed' | 'conditions'
> {
  /** Searches that find their rows' keys elsewhere (listConditions intersects them). */
  keySearches?: KeySearches<P>;
  /** FROM clause: the table, with what it joins for the record's fields. */
  from: SQL;
  /**
   * FROM clause of the count and of the choice of a page's keys, when the conditions and the
   * orders need less than `from` (default `from`).
   */
  countFrom?: SQL;
  organizationColumn: SQLWrapper;
  primaryKey: SQLWrapper;
  /** The record's fields (their aliases are the record's keys) and the SQL each is read from. */
  fields: Record<string, SQLWrapper>;
  /**
   * The properties whose values may be longer than an index entry holds: PostgreSQL orders them
   * through the indexed prefix, SQLite (whose indexes take any length) by the whole value.
   */
  prefixOrdered?: Partial<Record<P, PrefixOrdered>>;
}

/** FROM clause of the count and of the choice of a page's keys, rendered once per table. */
const keysFrom = <P extends string>(table: ListTable<P>, kind: Db['kind']) =>
  renderedOnceSql(kind, table, 'count from', () => table.countFrom ?? table.from);

const prefixOrderedOn = <P extends string>(table: ListTable<P>, kind: Db['kind'], property: P) =>
  kind === 'postgres' ? table.prefixOrdered?.[property] : undefined;

/** ORDER BY of `order` in `table`'s list, the primary key breaking ties. */
export function tableOrder<P extends string>(
  table: ListTable<P>,
  { kind, spelling }: Pick<Db, 'kind' | 'spelling'>,
  order: ListQuery<P>['order'],
): SQL {
  const ordered = listOrder({ order }, table.columns, table.primaryKey, spelling);
  const long = prefixOrderedOn(table, kind, order.property);
  return long ? prefixedOrder(long.column, order.direction, ordered, spelling) : ordered;
}

/**
 * The properties of `query`'s substring searches (text and JSON, searched in their own column) past
 * the first one's. SQLite seeks no index for a substring: it reads one such search's column from
 * that column's index (organization, column, id), where it finds the id, but every other
 * column from the table's row, a read several times dearer; listWhere has it read each of them
 * from its own index too. The prompts and experiments lists index every column they order by; a
 * list of a few rows per organization without such indexes (channel targets) reads its table once
 * more instead.
 */
function laterSubstringProperties<P extends string>(
  table: ListTable<P>,
  filters: ListQuery<P>['filters'],
): P[] {
  const substrings = filters
    .filter(({ kind }) => kind === 'text' || kind === 'json')
    .map(({ property }) => property)
    .filter((property) => !table.keySearches?.[property]);
  return [...new Set(substrings)].slice(1);
}

/** The condition of the organization's rows of `table` that `query`'s searches and window match. */
export function listWhere<P extends string>(
  table: ListTable<P>,
  organizationId: number,
  query: Pick<ListQuery<P>, 'filters' | 'window'>,
  { kind, spelling }: Pick<Db, 'kind' | 'spelling'>,
  within?: SQL,
): SQL {
  const { organizationColumn, primaryKey, keySearches, ...options } = table;
  const ofOrganization = eq(organizationColumn, organizationId);
  /** The keys of the organization's rows that meet `condition` on one column, from its index. */
  const fromOwnIndex = (condition: SQL) =>
    sql`SELECT ${primaryKey} FROM ${keysFrom(table, kind)} WHERE ${ofOrganization} AND ${condition}`;
  const onSqlite = kind === 'sqlite';
  const either = options.either && {
    ...options.either,
    half: onSqlite
      ? (condition: SQL) => sql`${primaryKey} IN (${fromOwnIndex(condition)})`
      : undefined,
  };
  const conditions: Partial<Record<P, OwnSearch<P>>> = {};
  for (const property of onSqlite ? laterSubstringProperties(table, query.filters) : []) {
    // Tested against the list of keys, never sought by them: a seek would read the table's row.
    conditions[property] = (filter) =>
      sql`+${primaryKey} IN (${fromOwnIndex(filterCondition(filter, options.columns, spelling)!)})`;
  }
  return and(
    ofOrganization,
    within,
    ...listConditions(query, organizationId, {
      ...options,
      conditions,
      either,
      keyed: keySearches && { primaryKey, searches: keySearches },
      spelling,
    }),
  )!;
}

/**
 * One page of a list and the count of all its matches, in one snapshot: the rows of `query`'s
 * page (keyset after a cursor, else by number), where the next page starts, and the total.
 * `within` is what every row of a nested list meets besides the organization (the parent's id).
 * The page's keys are chosen first from the order's index alone, so the rows skipped to reach a
 * deep page are never read whole nor joined; then only the page's rows are read.
 */
export function* selectListPage<P extends string, R extends { id: number }>(
  table: ListTable<P>,
  organizationId: number,
  query: ListQuery<P>,
  db: Pick<Db, 'kind' | 'spelling'>,
  within?: SQL,
): Steps<{
  rows: Array<Omit<R & { sortKey: unknown }, 'sortKey'>>;
  totalCount: number;
  next: ListPosition | null;
}> {
  const { kind } = db;
  const { from, primaryKey, fields } = table;
  const keys = keysFrom(table, kind);
  const where = listWhere(table, organizationId, query, db, within);
  const [counted] = yield* selectRows<{ n: number }>(
    sql`SELECT count(*) AS "n" FROM ${keys} WHERE ${where}`,
  );
  const totalCount = counted?.n ?? 0;
  const { property } = query.order;
  const selected = renderedOnceSql(kind, table, `select ${property}`, () =>
    selectList({ ...fields, sortKey: table.columns[property] }),
  );
  /** The page's rows in the query's order, of the keys `pageKeys` reads. */
  const rowsOf = (pageKeys: SQL) =>
    selectRows<R & { sortKey: unknown }>(
      sql`SELECT ${selected} FROM ${renderedOnceSql(kind, table, 'from', () => from)}
        WHERE ${primaryKey} IN (${pageKeys})
        ORDER BY ${tableOrder(table, db, query.order)}`,
    );
  /** The page's rows, of the keys `chosen` picks in `order`. */
  const readRows = (order: ListQuery<P>['order'], chosen: SQL, limit: SQL) =>
    rowsOf(
      sql`SELECT ${primaryKey} FROM ${keys} WHERE ${chosen}
        ORDER BY ${tableOrder(table, db, order)} ${limit}`,
    );
  if (query.limit === 0) return { rows: [], totalCount, next: null };
  const long = prefixOrderedOn(table, kind, property);
  if (query.after) {
    const position = yield* wholePosition(query.after, {
      column: table.columns[property],
      from: keys,
      primaryKey,
      ofOrganization: eq(table.organizationColumn, organizationId),
    });
    const { after, limitOffset } = pageWindow(
      { ...query, after: position },
      table.columns,
      primaryKey,
    );
    const bound = long && prefixBound(long.column, query.order.direction, position.value, long);
    const read = yield* readRows(query.order, and(where, after, bound)!, limitOffset);
    return { ...splitPage(read, query.limit), totalCount };
  }
  const page = numberedPage(query, totalCount);
  if (!page) return { rows: [], totalCount, next: null };
  const nearStart =
    long &&
    nullsApart(
      long,
      page.order.direction,
      {
        select: sql`SELECT ${primaryKey} AS "id", ${long.column} AS "sortKey" FROM ${keys}`,
        conditions: where,
        primaryKey,
        ordered: tableOrder(table, db, page.order),
      },
      page,
    );
  const read = yield* nearStart
    ? rowsOf(sql`SELECT "id" FROM (${nearStart}) AS "page"`)
    : readRows(page.order, where, sql`LIMIT ${page.take} OFFSET ${page.skip}`);
  return { ...pageOf(read, page.hasMore), totalCount };
}
