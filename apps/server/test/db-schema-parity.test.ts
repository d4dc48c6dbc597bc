// The two hand-written schema modules (src/db/schema/sqlite.ts for SQLite, schema/postgres.ts for
// PostgreSQL) describe one data model: the same tables, columns, value types, nullability,
// primary keys and indexes. Where they differ on purpose, the difference is listed here with
// its reason; anything else is a column or an index added to one database and forgotten in the
// other. (tools/migrations-check.sh checks each module against its committed migrations.)

import { getTableConfig as postgresTable, PgTable } from 'drizzle-orm/pg-core';
import { getTableConfig as sqliteTable, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import * as postgresSchema from '../src/db/schema/postgres.js';
import * as sqliteSchema from '../src/db/schema/sqlite.js';

interface Shape {
  columns: Record<string, string>;
  primaryKey: string[];
  indexes: Record<string, string>;
}

type AnyConfig = ReturnType<typeof sqliteTable> | ReturnType<typeof postgresTable>;

/**
 * The value's type in the application (number, string, boolean, json...), the thing both
 * databases must agree on; the SQL types legitimately differ (jsonb, boolean). PostgreSQL's text
 * columns are a custom type (`text COLLATE "C"`, for SQLite's byte order): strings too.
 */
function valueType(column: { dataType: string; getSQLType(): string }): string {
  return column.dataType === 'custom' && column.getSQLType().startsWith('text ')
    ? 'string'
    : column.dataType;
}

function shape(config: AnyConfig): Shape {
  const columns = config.columns as Array<{
    name: string;
    dataType: string;
    notNull: boolean;
    primary: boolean;
    getSQLType(): string;
  }>;
  const compositeKey = config.primaryKeys.flatMap((key) =>
    key.columns.map((column) => column.name),
  );
  const indexes = config.indexes as Array<{
    config: { name: string; unique: boolean; where?: unknown; columns: Array<{ name?: string }> };
  }>;
  return {
    columns: Object.fromEntries(
      columns.map((c) => [c.name, `${valueType(c)}${c.notNull ? ' not null' : ''}`]),
    ),
    primaryKey: [...columns.filter((c) => c.primary).map((c) => c.name), ...compositeKey],
    indexes: Object.fromEntries(
      indexes.map(({ config: index }) => [
        index.name,
        `${index.unique ? 'unique ' : ''}(${index.columns.map((c) => c.name ?? '<expression>').join(', ')})${index.where ? ' where ...' : ''}`,
      ]),
    ),
  };
}

function tables(
  schema: object,
  isTable: (value: unknown) => boolean,
  config: (t: never) => AnyConfig,
) {
  return Object.fromEntries(
    Object.values(schema)
      .filter(isTable)
      .map((table) => {
        const c = config(table as never);
        return [c.name, shape(c)];
      }),
  );
}

const sqlite = tables(sqliteSchema, (v) => v instanceof SQLiteTable, sqliteTable);
const postgres = tables(postgresSchema, (v) => v instanceof PgTable, postgresTable);

/**
 * The differences made on purpose. PostgreSQL has no rowid riding along in every index, so its
 * events indexes end in `id` for the keyset pages and the newest-first scans, and it has one more
 * index for the per-organization highest id (migration 0003's trigger reads it); SQLite's FTS5
 * and PostgreSQL's trigram index are outside drizzle's schema.
 */
/**
 * PostgreSQL partitions events by timestamp (migration 0014) and requires the partition key in
 * every unique index, the primary key's too; SQLite's rowid is the id alone. Both draw ids from
 * one sequence, so the id is unique on both.
 */
const POSTGRES_PRIMARY_KEYS: Record<string, string[]> = { events: ['id', 'timestamp'] };
const POSTGRES_ONLY_INDEXES: Record<string, string> = {
  events_organization_id_idx: '(organization_id, id)',
};
/**
 * An event's description or attributes, a prompt's joined tool names, description or context,
 * and an experiment's description may be longer than a PostgreSQL B-tree entry holds: their
 * indexes hold a prefix of the text (src/db/schema/order-prefix.ts). SQLite indexes the others'
 * whole, and has no index of the events' attributes, which its import could not afford
 * (src/db/schema/sqlite.ts).
 */
const POSTGRES_PREFIX_INDEXES: Record<string, Record<string, string>> = {
  events: {
    events_organization_description_idx: '(organization_id, <expression>, id)',
    events_organization_attributes_idx: '(organization_id, <expression>, id)',
  },
  prompts: {
    prompts_organization_tool_names_idx: '(organization_id, <expression>, id)',
    prompts_organization_description_idx: '(organization_id, <expression>, id)',
    prompts_organization_context_idx: '(organization_id, <expression>, id)',
  },
  experiments: { experiments_organization_description_idx: '(organization_id, <expression>, id)' },
};
/** The prompts list orders by llm_config's text (spelling.jsonText): PostgreSQL indexes that. */
const POSTGRES_JSON_TEXT_INDEXES: Record<string, Record<string, string>> = {
  prompts: { prompts_organization_llm_config_idx: '(organization_id, <expression>, id)' },
};
const POSTGRES_INDEXES_ENDING_IN_ID = new Set([
  'events_organization_session_idx',
  'events_organization_conversation_idx',
  'events_organization_user_idx',
  'events_organization_category_idx',
  'events_organization_type_idx',
  'events_organization_source_idx',
  'events_organization_source_id_idx',
  'prompts_organization_name_idx',
]);

describe('the SQLite and PostgreSQL schemas', () => {
  it('have the same tables', () => {
    expect(Object.keys(postgres).sort()).toEqual(Object.keys(sqlite).sort());
    expect(Object.keys(sqlite).length).toBeGreaterThan(10);
  });

  it.each(Object.keys(sqlite).sort())(
    '%s: same columns, value types, nullability and key',
    (name) => {
      expect(postgres[name]?.columns).toEqual(sqlite[name]!.columns);
      expect(postgres[name]?.primaryKey).toEqual(
        POSTGRES_PRIMARY_KEYS[name] ?? sqlite[name]!.primaryKey,
      );
    },
  );

  it.each(Object.keys(sqlite).sort())(
    '%s: same indexes, but for the listed differences',
    (name) => {
      const expected = { ...sqlite[name]!.indexes };
      for (const index of POSTGRES_INDEXES_ENDING_IN_ID) {
        if (expected[index]) expected[index] = expected[index].replace(/\)$/, ', id)');
      }
      if (name === 'events') Object.assign(expected, POSTGRES_ONLY_INDEXES);
      Object.assign(expected, POSTGRES_PREFIX_INDEXES[name], POSTGRES_JSON_TEXT_INDEXES[name]);
      expect(postgres[name]?.indexes).toEqual(expected);
    },
  );
});
