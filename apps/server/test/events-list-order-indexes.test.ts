// Every order of the events list is read from an index, on both databases (but one on SQLite,
// below): a page of any order, in either direction, reads its rows in order and stops at the
// page's end, where an order without one sorted all the organization's events first
// (docs/benchmarks.md, "Every shape of the events list"). The pages themselves are checked
// against the plain query in events-list-fast-paths.test.ts.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { eventOrder } from '../src/db/repositories/event-conditions.js';
import { EventProperties } from '../src/generated/enum-values.js';
import { orderPlans } from './support/order-plans.js';
import { onSqlite } from './support/test-database.js';

const plans = orderPlans();

/** The order SQLite sorts, whose index the import could not afford (src/db/schema/sqlite.ts). */
const SORTED_ON_SQLITE = new Set(['attributes']);

describe('every order of the events list', () => {
  it.each(
    EventProperties.filter((property) => !(onSqlite && SORTED_ON_SQLITE.has(property))).flatMap(
      (property) => [[property, 'asc'] as const, [property, 'desc'] as const],
    ),
  )('%s %s is read from an index, never sorted', async (property, direction) => {
    const db = plans.db();
    const plan = await plans.planOf(sql`events`, eventOrder(db, { property, direction }));
    if (db.kind === 'sqlite') {
      expect(plan).toMatch(/USING (COVERING )?INDEX events_organization_\w+_idx/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    } else {
      expect(plan).toMatch(/Index (Only )?Scan (Backward )?using events_\w+_idx/);
      // An incremental sort orders only the rows whose indexed prefix ties, as the page reads.
      expect(plan).not.toMatch(/^\s*(->\s+)?Sort {2}\(/m);
    }
  });
});
