// Everything SQLite and PostgreSQL spell differently, in one place: repositories write each query
// once and take these pieces from `db.spelling`; no repository tests which database it is for a
// spelling.

import { Column, is, sql, type SQL, type SQLWrapper } from 'drizzle-orm';

export interface JsonField {
  /** The key: one of the code's own names, written into the SQL as a literal. */
  name: string;
  value: SQLWrapper;
  /** The value holds JSON: embedded as such, not quoted as a string. */
  isJson: boolean;
}

export interface Spelling {
  /**
   * Case-insensitive substring match, with LIKE's wildcards in `value` matched literally. SQLite's
   * LIKE folds ASCII case only; so does PostgreSQL's ILIKE on the "C"-collated columns, and its
   * pg_trgm indexes serve it.
   */
  contains(column: SQLWrapper, value: string): SQL;
  /**
   * A JSON column as the text it was stored as, searched and ordered byte by byte: SQLite keeps
   * JSON as text; PostgreSQL's json type keeps the text verbatim, and "C" orders it as SQLite does.
   */
  jsonText(column: SQLWrapper): SQL;
  /** `values` joined with `separator` in `order`: group_concat, or string_agg. */
  joined(values: SQLWrapper, separator: string, order: SQLWrapper): SQL;
  /**
   * One ORDER BY term with NULL first ascending and last descending, as SQLite has it. PostgreSQL's
   * default is the opposite, so there it is spelled out, except for a NOT NULL column: its planner
   * does not know that the clause changes nothing there, and would sort rather than walk an index.
   */
  orderTerm(column: SQLWrapper, direction: 'asc' | 'desc'): SQL;
  /** A JSON object of these fields, as text. */
  jsonObject(fields: readonly JsonField[]): SQL;
  /**
   * `WITH RECURSIVE name(column) AS (anchor UNION ALL step) select`, evaluated only until `limit`
   * rows: SQLite takes the LIMIT inside the recursion; PostgreSQL refuses it there and evaluates a
   * recursion only as far as the outer query reads it.
   */
  limitedRecursion(cte: SQL, anchor: SQL, step: SQL, select: SQL, limit: number): SQL;
}

function containsPattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A string literal written into the SQL, for the code's own constants (JSON keys, separators):
 * as a bound parameter PostgreSQL could not always infer its type in these functions.
 */
function literal(text: string): SQL {
  return sql.raw(`'${text.replaceAll("'", "''")}'`);
}

function fieldList(fields: readonly JsonField[], value: (field: JsonField) => SQL): SQL {
  return sql.join(
    fields.map((field) => sql`${literal(field.name)}, ${value(field)}`),
    sql`, `,
  );
}

function direction(value: 'asc' | 'desc'): SQL {
  return sql.raw(value === 'asc' ? 'ASC' : 'DESC');
}

export const SQLITE_SPELLING: Spelling = {
  contains: (column, value) => sql`${column} LIKE ${containsPattern(value)} ESCAPE '\\'`,
  jsonText: (column) => sql`${column}`,
  joined: (values, separator, order) =>
    sql`group_concat(${values}, ${literal(separator)} ORDER BY ${order})`,
  orderTerm: (column, order) => sql`${column} ${direction(order)}`,
  // SQLite keeps JSON as text: json() marks it as JSON for json_object.
  jsonObject: (fields) =>
    sql`json_object(${fieldList(fields, ({ value, isJson }) => (isJson ? sql`json(${value})` : sql`${value}`))})`,
  limitedRecursion: (cte, anchor, step, select, limit) =>
    sql`WITH RECURSIVE ${cte} AS (${anchor} UNION ALL ${step} LIMIT ${limit}) ${select}`,
};

export const POSTGRES_SPELLING: Spelling = {
  contains: (column, value) => sql`${column} ILIKE ${containsPattern(value)} ESCAPE '\\'`,
  jsonText: (column) => sql`(${column}::text COLLATE "C")`,
  joined: (values, separator, order) =>
    sql`string_agg(${values}, ${literal(separator)} ORDER BY ${order})`,
  orderTerm: (column, order) => {
    if (is(column, Column) && column.notNull) return sql`${column} ${direction(order)}`;
    return sql`${column} ${direction(order)} ${sql.raw(order === 'asc' ? 'NULLS FIRST' : 'NULLS LAST')}`;
  },
  // Spelled out rather than json_build_object, whose text puts spaces around every `:` and after
  // every `,`: the same item is then the same bytes as SQLite's compact json_object (to_json
  // escapes as SQLite does; a json column is embedded as stored).
  jsonObject: (fields) =>
    sql`(${sql.join(
      [
        ...fields.flatMap(({ name, value, isJson }, index) => [
          literal(`${index === 0 ? '{' : ','}${JSON.stringify(name)}:`),
          isJson
            ? sql`coalesce(${value}::text, 'null')`
            : sql`coalesce(to_json(${value})::text, 'null')`,
        ]),
        literal('}'),
      ],
      sql` || `,
    )})`,
  limitedRecursion: (cte, anchor, step, select, limit) =>
    sql`WITH RECURSIVE ${cte} AS (${anchor} UNION ALL ${step}) ${select} LIMIT ${limit}`,
};
