// How much of a long text PostgreSQL's order indexes hold: a B-tree entry holds at most about
// 2.7 kB, and an event's description or attributes, or a prompt's joined tool names, description
// or context, may be longer. Their indexes (schema/postgres.ts) hold this prefix, and an order by
// one reads it first, then the whole text among equal prefixes (only those are sorted: an
// incremental sort; db/engine/list-sql.ts). That is the whole text's order because text compares
// by code point (COLLATE "C") on PostgreSQL, as SQLite compares all text. One expression for the
// indexes and the orders, or the planner would not match them.

import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';

export const ORDER_PREFIX_CHARACTERS = 200;

/** The indexed prefix of a long text. */
export function orderPrefix(text: SQLWrapper): SQL {
  return sql`left(${text}, ${sql.raw(String(ORDER_PREFIX_CHARACTERS))})`;
}
