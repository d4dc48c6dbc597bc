// Every order of the events list is read from an index, on both databases (but one on SQLite,
// below): a page of any order, in either direction, reads its rows in order and stops at the
// page's end, where an order without one sorted all the organization's events first
// (docs/benchmarks.md, "Every shape of the events list"). The pages themselves are checked
// against the plain query in events-list-fast-paths.test.ts. And SQLite reads every match of a
// search that no index narrows (its count, a page of few matches) in time order, the table's own,
// not in a random one, and those of a search of an identifier through that identifier's index;
// where it sorts many matches, it builds the items of the page's alone.

import assert from 'node:assert';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  eventOrder,
  SORTED_ON_SQLITE as SORTED_FROM_SCHEMA,
  type EventSelection,
} from '../src/db/repositories/event-conditions.js';
import { insertEventBatch, type EventToImport } from '../src/db/repositories/event-import.js';
import { countStatement } from '../src/db/repositories/events.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { listEvents } from '../src/runtime/event-list-memory.js';
import { EVENT_LIST } from '../src/domain/events.js';
import { EventProperties } from '../src/generated/enum-values.js';
import type { EventProperty } from '../src/vocabulary/events.js';
import { expectFirstWithoutText, orderPlans, planText } from './support/order-plans.js';
import { listQueryOf } from './support/list-queries.js';
import { withStatements } from './support/sent-statements.js';
import { onSqlite, queryTestDb, secondApartEvents } from './support/test-database.js';

const plans = orderPlans();

/** The order SQLite sorts, whose index the import could not afford (src/db/schema/sqlite.ts). */
const SORTED_ON_SQLITE = new Set(['attributes']);

/** A new organization of `count` events a second apart (secondApartEvents). */
async function organizationOf(
  name: string,
  event: (i: number) => Partial<EventToImport>,
  count = 300,
) {
  const db = plans.db();
  const organizationId = (await createOrganization(db, name)).id;
  await insertEventBatch(db, organizationId, secondApartEvents(name, count, event));
  return organizationId;
}

describe('every order of the events list', () => {
  it('is sorted on SQLite only where the schema gives it no index', () => {
    expect(SORTED_FROM_SCHEMA).toEqual(SORTED_ON_SQLITE);
  });

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

  /** The total of page 0 of the organization's events with these searches, and SQLite's reads. */
  async function listedWithReads(organizationId: number, searches: Record<string, string>) {
    const db = plans.db();
    const query = await listQueryOf(db, EVENT_LIST, organizationId, {
      search_fields: Object.keys(searches) as EventProperty[],
      search_field_values: Object.values(searches),
    });
    const { result, statements } = await withStatements(db, () =>
      listEvents(db, organizationId, query),
    );
    return { totalCount: result.totalCount, reads: statements };
  }

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

  it("that names an identifier reads the identifier's index, beside a value or a word", async () => {
    // The planner keeps no statistics: a category's values looked as narrow as one user.
    const user = { property: 'user_id', kind: 'exact', value: '+14155550100' } as const;
    expect(await countPlan([category, user], new Map([[category, ['tool', 'llm']]]))).toMatch(
      /USING (COVERING )?INDEX events_organization_user_idx/,
    );
    const hooli = await organizationOf('hooli', (i) => ({
      userId: `+1415555${String(i % 50).padStart(4, '0')}`,
      description: i % 100 === 7 ? `Asked for a refund ${i}` : `Looked up order ${i}`,
    }));
    const { totalCount, reads } = await listedWithReads(hooli, {
      description: 'refund',
      user_id: '+14155550007',
    });
    expect(totalCount).toBe(3);
    // A rare word alone is found through the trigram index (events-list-search.test.ts).
    expect(reads.filter(({ text }) => text.includes('events_description_fts'))).toEqual([]);
  });

  it('reads a page of few matches that no index narrows in the same order', async () => {
    // One match in 300: few enough that the page is read by finding every match, then sorting.
    const initech = await organizationOf('initech', (i) => ({
      sessionId: `s-${i % 7}`,
      userId: `+1415555${String(i).padStart(4, '0')}`,
      attributes: JSON.stringify({ tier: i === 150 ? 'gold' : 'free' }),
    }));
    const { totalCount, reads } = await listedWithReads(initech, { attributes: 'gold' });
    expect(totalCount).toBe(1);
    const db = plans.db();
    assert(db.kind === 'sqlite');
    const searches = reads.filter(({ text }) => text.includes(' LIKE '));
    // The count and the page.
    expect(searches).toHaveLength(2);
    for (const { text, values } of searches) {
      const plan = db.sqlite
        .prepare(`EXPLAIN QUERY PLAN ${text}`)
        .all(...values)
        .map((row) => (row as { detail: string }).detail)
        .join('\n');
      expect(plan).toMatch(/USING INDEX events_organization_timestamp_idx/);
    }
  });
});

describe.runIf(onSqlite)('a page SQLite sorts', () => {
  it("sorts its matches' keys, then reads the page's items by id", async () => {
    const db = plans.db();
    const umbrella = await organizationOf('umbrella', (i) => ({ sessionId: `s-${i % 7}` }));
    // 200 of the 300 events, in an order other than the window's own: every match is sorted.
    const query = await listQueryOf(db, EVENT_LIST, umbrella, {
      start_datetime: '2026-05-01T00:00:50Z',
      end_datetime: '2026-05-01T00:04:10Z',
      order_by: 'session_id',
      order_by_direction: 'desc',
      limit: 10,
      page: 3,
    });
    const { result, statements } = await withStatements(db, () => listEvents(db, umbrella, query));
    expect(result.totalCount).toBe(200);
    const expected = Array.from({ length: 200 }, (_, k) => 50 + k)
      .sort((a, b) => (b % 7) - (a % 7) || b - a)
      .slice(30, 40)
      .map((i) => new Date(Date.UTC(2026, 4, 1) + i * 1000).toISOString());
    const items = result.rows.map(({ json }) => JSON.parse(json) as { timestamp: string });
    expect(items.map(({ timestamp }) => timestamp)).toEqual(expected);
    const pages = statements.filter(({ text }) => text.includes('ORDER BY'));
    expect(pages).toHaveLength(1);
    // The matches sorted by their keys alone in a subquery; the items built of its ids.
    const [built, sortedKeys] = pages[0]!.text.split('"id" IN (');
    expect(sortedKeys).toBeDefined();
    expect(sortedKeys).not.toContain('json_object');
    expect(built).toContain('json_object');
  });
});

describe.runIf(!onSqlite)("PostgreSQL's first page of a long text's order", () => {
  it.each(['description', 'attributes'] as const)(
    'by %s reads the events without it in id order, not all of them sorted',
    async (property) => {
      const db = plans.db();
      assert(db.kind === 'postgres');
      // Most events without the text: as one read, the order sorted all of them for page 0.
      const organizationId = await organizationOf(
        `without-${property}`,
        (i) => ({
          description: i % 4 === 0 ? `Looked up order ${i}` : null,
          attributes: i % 4 === 0 ? JSON.stringify({ order: i }) : null,
        }),
        400,
      );
      const firstWithout = (
        await queryTestDb<{ id: number }>(
          db,
          sql`SELECT id FROM events WHERE organization_id = ${organizationId}
              AND ${sql.identifier(property)} IS NULL ORDER BY id LIMIT 100`,
        )
      ).map(({ id }) => Number(id));
      // Each of the page's two reads stops at its end (and the next row, for has-more).
      await expectFirstWithoutText(
        db,
        EVENT_LIST,
        organizationId,
        property,
        { lastPage: 3, withoutText: firstWithout, maxScanned: 2 * 101 + 1 },
        async (query) => (await listEvents(db, organizationId, query)).rows.map(({ id }) => id),
      );
    },
  );
});
