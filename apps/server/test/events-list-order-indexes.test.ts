// Every order of the events list is read from an index, on both databases (but one on SQLite,
// below): a page of any order, in either direction, reads its rows in order and stops at the
// page's end, where an order without one sorted all the organization's events first
// (docs/benchmarks.md, "Every shape of the events list"). The pages themselves are checked
// against the plain query in events-list-fast-paths.test.ts. And SQLite counts a search that no
// index narrows in time order, the table's own, not in a random one.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { eventOrder, type EventSelection } from '../src/db/repositories/event-conditions.js';
import { countStatement } from '../src/db/repositories/events.js';
import { EventProperties } from '../src/generated/enum-values.js';
import { orderPlans, planText } from './support/order-plans.js';
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

describe.runIf(onSqlite)("SQLite's count of a search", () => {
  const attributes = { property: 'attributes', kind: 'json', value: 'gold' } as const;
  const category = { property: 'category', kind: 'text', value: 'tool' } as const;
  const countPlan = (filters: EventSelection['filters'], values = new Map()) => {
    const selection = { filters, window: {} };
    return planText(
      plans.db(),
      countStatement(plans.db(), 1, selection, { values, trigrams: new Set() }),
    );
  };

  it("that no index narrows reads the rows in the timestamp index's order", async () => {
    // Any index starting with the organization would do for the planner; description's or
    // user_id's read the rows in random order.
    expect(await countPlan([attributes])).toMatch(/USING INDEX events_organization_timestamp_idx/);
  });

  it('that an index narrows reads that index', async () => {
    const user = { property: 'user_id', kind: 'exact', value: '+14155550100' } as const;
    expect(await countPlan([attributes, user])).toMatch(
      /USING (COVERING )?INDEX events_organization_user_idx/,
    );
    expect(await countPlan([attributes, category], new Map([[category, ['tool']]]))).toMatch(
      /USING INDEX events_organization_category_idx/,
    );
  });
});
