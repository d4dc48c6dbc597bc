// The events list's fast paths (cached counts, skip-scan values, the trigram index, reversed deep
// pages) against the plain query they replace: every shape must return exactly the same page and
// total_count, also after more events arrive through another connection to the same file.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateDb, type Db } from '../src/db/client.js';
import { listConditions, listOrder } from '../src/db/list-sql.js';
import { insertEventBatch } from '../src/db/repositories/event-import.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { EVENT_COLUMNS, listEvents } from '../src/db/repositories/events.js';
import { events } from '../src/db/schema.js';
import { EVENT_LIST, type EventProperty } from '../src/domain/events.js';
import { parseListQuery, type ListParameters, type ListQuery } from '../src/domain/list-query.js';

/** The list as one plain query: LIKE scans, a full count, OFFSET from the start. */
function plainList(db: Db, organizationId: number, query: ListQuery<EventProperty>) {
  const where = and(
    eq(events.organizationId, organizationId),
    ...listConditions(query, { columns: EVENT_COLUMNS, windowColumn: events.timestamp }),
  );
  const rows = db.orm
    .select()
    .from(events)
    .where(where)
    .orderBy(...listOrder(query, EVENT_COLUMNS, events.id))
    .limit(query.limit)
    .offset(query.offset)
    .all();
  const [total] = db.orm.select({ n: count() }).from(events).where(where).all();
  return { rows, totalCount: total!.n };
}

const CATEGORIES = ['session', 'tool', 'llm', 'Session', 'SESSION_end', null];
const TYPES = ['session-started', 'tool-call', 'tool_error', 'completion', '50%-done', null];
const DESCRIPTIONS = [
  'Refund requested for order 100%',
  'refund_policy looked up',
  'REFUND denied',
  'Called lookup_order',
  'Émile asked for a réfund',
  'ab',
  'a_b a%b',
  null,
];

/** Deterministic events with many ties (few timestamps, few sessions) and NULLs everywhere. */
function generatedEvents(organizationId: number, n: number, seed: number) {
  return Array.from({ length: n }, (_, i) => {
    const k = (i * 7919 + seed) % 1009;
    return {
      organizationId,
      timestamp: `2026-05-0${1 + (k % 3)}T10:00:0${k % 4}.000Z`,
      sessionId: k % 11 === 0 ? null : `s-${k % 17}`,
      conversationId: `c-${k % 5}`,
      userId: k % 13 === 0 ? null : `u-${k % 7}`,
      // k 5 and 6 are rare (under 1% of the events), so those pages seek through the indexes.
      category: k === 5 ? 'Rare_kind' : CATEGORIES[k % CATEGORIES.length]!,
      type: TYPES[(k >> 2) % TYPES.length]!,
      description: k === 6 ? 'a Needle, NEEDLE' : DESCRIPTIONS[(k >> 1) % DESCRIPTIONS.length]!,
      attributes: k % 3 === 0 ? { k } : null,
    };
  });
}

let directory: string;
let db: Db;
let other: Db;
let acme: number;
let globex: number;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'agentline-events-fast-'));
  db = createDb(join(directory, 'events.db'));
  await migrateDb(db);
  other = createDb(join(directory, 'events.db'));
  acme = (await createOrganization(db, 'Acme')).id;
  globex = (await createOrganization(db, 'Globex')).id;
  for (const rows of [generatedEvents(acme, 1500, 1), generatedEvents(globex, 700, 2)]) {
    for (let i = 0; i < rows.length; i += 500) {
      db.orm
        .insert(events)
        .values(rows.slice(i, i + 500))
        .run();
    }
  }
});

afterAll(() => {
  other.close();
  db.close();
  rmSync(directory, { recursive: true, force: true });
});

function query(params: Partial<ListParameters<EventProperty>>): ListQuery<EventProperty> {
  return parseListQuery(EVENT_LIST, {
    page: 0,
    limit: 25,
    search_fields: [],
    search_field_values: [],
    fields: [],
    ...params,
  });
}

const search = (pairs: Array<[EventProperty, string]>) => ({
  search_fields: pairs.map(([field]) => field),
  search_field_values: pairs.map(([, value]) => value),
});

const SHAPES: Array<[string, Partial<ListParameters<EventProperty>>]> = [
  ['default page', {}],
  ['session_id', search([['session_id', 's-3']])],
  ['conversation_id', search([['conversation_id', 'c-2']])],
  ['user_id', search([['user_id', 'u-4']])],
  ['category substring, any case', search([['category', 'sESSion']])],
  ['category with "_"', search([['category', 'n_e']])],
  ['type with "%"', search([['type', '0%-']])],
  ['type matching nothing', search([['type', 'zzz']])],
  [
    'category and type',
    search([
      ['category', 'tool'],
      ['type', 'tool'],
    ]),
  ],
  ['time window', { start_datetime: '2026-05-02T00:00:00Z', end_datetime: '2026-05-03T00:00:00Z' }],
  ['description, 3+ characters', search([['description', 'rEfUnD']])],
  ['description with "%"', search([['description', '100%']])],
  ['description with "_"', search([['description', 'd_p']])],
  ['description "a_b" (literal _)', search([['description', 'a_b']])],
  ['description, non-ASCII case', search([['description', 'émile']])],
  ['description, non-ASCII', search([['description', 'réf']])],
  ['description, short', search([['description', 'ab']])],
  [
    'description and category',
    search([
      ['description', 'refund'],
      ['category', 'session'],
    ]),
  ],
  ['description, rare', search([['description', 'needle']])],
  ['category, rare', search([['category', 'RE_K']])],
  ['order by session_id desc', { order_by: 'session_id', order_by_direction: 'desc' }],
  ['order by user_id asc', { order_by: 'user_id' }],
  ['order by category desc', { order_by: 'category', order_by_direction: 'desc' }],
  ['order by type asc', { order_by: 'type' }],
  ['order by timestamp asc', { order_by: 'timestamp', order_by_direction: 'asc' }],
  ['filtered and ordered', { ...search([['category', 'tool']]), order_by: 'user_id' }],
];

async function expectSame(organizationId: number, params: Partial<ListParameters<EventProperty>>) {
  const q = query(params);
  const fast = await listEvents(db, organizationId, q);
  const plain = plainList(db, organizationId, q);
  expect(fast.totalCount).toBe(plain.totalCount);
  expect(fast.rows).toEqual(plain.rows);
  return plain.totalCount;
}

describe('every shape returns what the plain query returns', () => {
  it.each(SHAPES)(
    '%s: first, middle, past-the-middle, last and past-the-end pages',
    async (_, params) => {
      for (const organizationId of [acme, globex]) {
        const total = await expectSame(organizationId, params);
        const lastPage = Math.max(0, Math.ceil(total / 7) - 1);
        for (const page of new Set([
          1,
          Math.floor(lastPage / 2),
          lastPage - 3,
          lastPage,
          lastPage + 1,
        ])) {
          if (page >= 0) await expectSame(organizationId, { ...params, page, limit: 7 });
        }
        await expectSame(organizationId, { ...params, limit: 0 });
      }
    },
  );

  it('finds the same descriptions as the LIKE scan for every substring of every description', async () => {
    const substrings = new Set<string>();
    for (const text of DESCRIPTIONS) {
      if (!text) continue;
      for (let i = 0; i < text.length; i += 2) substrings.add(text.slice(i, i + 4).toUpperCase());
    }
    for (const value of substrings) {
      await expectSame(acme, { ...search([['description', value]]), limit: 1000 });
    }
  });
});

describe('cached counts and the description index', () => {
  it('stay exact as events arrive through another connection, also from a new value', async () => {
    const shapes = [...SHAPES.map(([, params]) => params), search([['category', 'brand-new']])];
    for (const params of shapes) await expectSame(acme, params);
    for (const round of [0, 1, 2]) {
      const more = generatedEvents(acme, 40 + round * 30, 100 + round).map((event, i) => ({
        ...event,
        category: i % 9 === 0 ? 'brand-new' : event.category,
      }));
      other.orm.insert(events).values(more).run();
      // Imported events reach the description index through the import's batch, not the trigger.
      await insertEventBatch(
        other,
        globex,
        generatedEvents(globex, 30, 200 + round).map((event, i) => ({
          ...event,
          importKey: `round-${round}-${i}`,
          sessionId: event.sessionId ?? null,
          userId: event.userId ?? null,
          source: null,
          sourceId: null,
          attributes: event.attributes ? JSON.stringify(event.attributes) : null,
        })),
      );
      for (const params of shapes) await expectSame(acme, params);
      for (const params of shapes) await expectSame(globex, params);
    }
  });

  it('leave the description index holding exactly the stored descriptions', () => {
    // Rank 1 compares the index with the events table, so a missed or doubled event fails it.
    expect(() =>
      db.sqlite.exec(
        `INSERT INTO events_description_fts (events_description_fts, rank) VALUES ('integrity-check', 1)`,
      ),
    ).not.toThrow();
  });
});
