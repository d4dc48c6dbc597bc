// Turns a parsed list query (domain/list-query.ts) into SQL conditions and an ORDER BY, for any
// table: a repository maps each property to a column or SQL expression and gets the rest here.

import { and, asc, desc, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { ListQuery, SearchFilter } from '../domain/list-query.js';

export type ColumnMap<P extends string> = Record<P, SQLWrapper>;

// Escapes LIKE's wildcards so a searched "%" or "_" is matched literally.
function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Case-insensitive substring match (SQLite's LIKE folds ASCII case). */
export function contains(column: SQLWrapper, value: string): SQL {
  return sql`${column} LIKE ${containsPattern(value)} ESCAPE '\\'`;
}

/** The largest code point: every text starting with the prefix sorts below prefix + this. */
const AFTER_PREFIX = '\u{10FFFF}';

function filterCondition<P extends string>(
  filter: SearchFilter<P>,
  columns: ColumnMap<P>,
  either?: readonly [SQLWrapper, SQLWrapper],
): SQL | undefined {
  const column = columns[filter.property];
  switch (filter.kind) {
    case 'text':
    case 'json':
      return contains(column, String(filter.value));
    case 'text_either': {
      const [first, second] = either ?? [column, column];
      return or(contains(first, String(filter.value)), contains(second, String(filter.value)));
    }
    case 'datetime':
      // A range instead of LIKE 'prefix%', so an index on the column serves it.
      return sql`${column} >= ${String(filter.value)} AND ${column} < ${`${String(filter.value)}${AFTER_PREFIX}`}`;
    case 'exact':
    case 'integer':
      return sql`${column} = ${filter.value}`;
    case 'boolean':
      // SQLite stores booleans as 0 and 1.
      return sql`${column} = ${filter.value ? 1 : 0}`;
  }
}

export interface ListSqlOptions<P extends string> {
  columns: ColumnMap<P>;
  /** The column the time window applies to. */
  windowColumn: SQLWrapper;
  /** The two columns a `text_either` property searches (name_description). */
  either?: readonly [SQLWrapper, SQLWrapper];
  /**
   * A property's own condition, for when its column would be slow to search; returning
   * undefined falls back to searching the column.
   */
  conditions?: Partial<Record<P, (filter: SearchFilter<P>) => SQL | undefined>>;
}

export function listConditions<P extends string>(
  query: ListQuery<P>,
  options: ListSqlOptions<P>,
): SQL[] {
  const conditions: SQL[] = [];
  for (const filter of query.filters) {
    const condition =
      options.conditions?.[filter.property]?.(filter) ??
      filterCondition(filter, options.columns, options.either);
    if (condition) conditions.push(condition);
  }
  if (query.window.start) conditions.push(sql`${options.windowColumn} >= ${query.window.start}`);
  if (query.window.end) conditions.push(sql`${options.windowColumn} < ${query.window.end}`);
  return conditions;
}

/** ORDER BY the chosen property, then the primary key in the same direction so pages are stable. */
export function listOrder<P extends string>(
  query: ListQuery<P>,
  columns: ColumnMap<P>,
  primaryKey: SQLWrapper,
): SQL[] {
  const direction = query.order.direction === 'asc' ? asc : desc;
  return [direction(columns[query.order.property]), direction(primaryKey)];
}
