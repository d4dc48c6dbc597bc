// The events list's fast paths (cached counts, skip-scan values, the trigram index, reversed deep
// pages) against the plain query they replace: every shape must return exactly the same page and
// total_count, also after more events arrive through another connection to the same database.

import assert from 'node:assert';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { listConditions, listOrder } from '../src/db/engine/list-sql.js';
import { insertEventBatch, type EventToImport } from '../src/db/repositories/event-import.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { cursorSigner } from '../src/runtime/cursor-signer.js';
import { eventColumns } from '../src/db/repositories/event-conditions.js';
import type { ListedEvent } from '../src/db/repositories/events.js';
import { eventListMemory, listEvents } from '../src/runtime/event-list-memory.js';
import {
  execute,
  parsedJson,
  runListRead,
  runSteps,
  selectList,
  selectRows,
} from '../src/db/engine/portable-sql.js';
import { events } from '../src/db/schema/sqlite.js';
import { EventProperties } from '../src/generated/enum-values.js';
import type { EventProperty } from '../src/vocabulary/events.js';
import type { ListQuery } from '../src/vocabulary/list-query.js';
import { EVENT_LIST } from '../src/domain/events.js';
import { encodeCursor, type ListParameters } from '../src/domain/list-query.js';
import { listQueryOf } from './support/list-queries.js';
import {
  checkDescriptionIndex,
  freshDatabaseUrl,
  insertTestEvents,
  onPostgres,
  onSqlite,
  queryTestDb,
  secondApartEvents,
  toImport,
} from './support/test-database.js';
import { planText } from './support/order-plans.js';

/** The id and each wire property of a listed event, from its column (attributes as stored). */
function listedColumns(db: Db) {
  return selectList({ id: events.id, ...eventColumns(db), attributes: events.attributes });
}

/**
 * The list as one plain query: LIKE scans, a full count, OFFSET from the start. On PostgreSQL
 * with index scans turned off, so the trigram index takes no part in the answer it is checked
 * against.
 */
async function plainList(db: Db, organizationId: number, query: ListQuery<EventProperty>) {
  const columns = eventColumns(db);
  const { spelling } = db;
  const where = and(
    eq(events.organizationId, organizationId),
    ...listConditions(query, organizationId, { columns, windowColumn: events.timestamp, spelling }),
  );
  const order = listOrder(query, columns, events.id, spelling);
  return runListRead(db, function* () {
    if (db.kind === 'postgres') {
      yield* execute(sql`SET LOCAL enable_indexscan = off`);
      yield* execute(sql`SET LOCAL enable_bitmapscan = off`);
    }
    const rows = yield* selectRows<{ attributes: unknown }>(
      sql`SELECT ${listedColumns(db)} FROM ${events} WHERE ${where}
          ORDER BY ${order} LIMIT ${query.limit} OFFSET ${query.offset}`,
    );
    const [total] = yield* selectRows<{ n: number }>(
      sql`SELECT count(*) AS "n" FROM ${events} WHERE ${where}`,
    );
    return {
      rows: rows.map((row) => ({ ...row, attributes: parsedJson(row.attributes) })),
      totalCount: total!.n,
    };
  });
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

const SOURCES = ['agent', 'user', 'Agent-tool', null];
const IN_HOUR = ['00:00.000', '00:00.001', '30:00.000', '59:59.999'];

/** Deterministic events, many ties and NULLs, over 21 hours and at both ends of each hour. */
function generatedEvents(organizationId: number, n: number, seed: number) {
  return Array.from({ length: n }, (_, i) => {
    const k = (i * 7919 + seed) % 1009;
    return {
      organizationId,
      timestamp: `2026-05-0${1 + (k % 3)}T${10 + (k % 7)}:${IN_HOUR[k % IN_HOUR.length]}Z`,
      source: SOURCES[(k >> 3) % SOURCES.length]!,
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

let databaseUrl: string;
let db: Db;
let other: Db;
let acme: number;
let globex: number;

beforeAll(async () => {
  // A database two connections (pools) can share: a file, not SQLite's in-memory one.
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  other = createDb(databaseUrl);
  acme = (await createOrganization(db, 'Acme')).id;
  globex = (await createOrganization(db, 'Globex')).id;
  for (const rows of [generatedEvents(acme, 1500, 1), generatedEvents(globex, 700, 2)]) {
    for (let i = 0; i < rows.length; i += 500) await insertTestEvents(db, rows.slice(i, i + 500));
  }
});

afterAll(async () => {
  await other.close();
  await db.close();
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

const query = (
  params: Partial<ListParameters<EventProperty>>,
  organizationId = acme,
): Promise<ListQuery<EventProperty>> => listQueryOf(db, EVENT_LIST, organizationId, params);

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
  ['source substring, any case', search([['source', 'AGENT']])],
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
  // Every property as the order, both directions: each is served by an index of its own.
  ...EventProperties.flatMap((property) =>
    (['asc', 'desc'] as const).map((direction): (typeof SHAPES)[number] => [
      `order by ${property} ${direction}`,
      { order_by: property, order_by_direction: direction },
    ]),
  ),
  ['filtered and ordered', { ...search([['category', 'tool']]), order_by: 'user_id' }],
];

/** A listed event as the plain query reads it: its id and its wire properties. */
function parsedItem({ id, json }: ListedEvent): Record<string, unknown> {
  return { id, ...(JSON.parse(json) as Record<string, unknown>) };
}

async function expectSame(organizationId: number, params: Partial<ListParameters<EventProperty>>) {
  const q = await query(params, organizationId);
  const fast = await listEvents(db, organizationId, q);
  const plain = await plainList(db, organizationId, q);
  expect(fast.totalCount).toBe(plain.totalCount);
  expect(fast.rows.map(parsedItem)).toEqual(plain.rows);
  return plain.totalCount;
}

// 23 a page, a prime as seven was: some 95 page ends a shape, at a third of seven's cost.
describe('every shape walked with cursors returns the plain list', () => {
  it.each(SHAPES)('%s: 23 at a time, both organizations', async (_, params) => {
    for (const organizationId of [acme, globex]) {
      const walked: unknown[] = [];
      let cursor: string | undefined;
      for (;;) {
        // With a cursor, page is ignored.
        const q = await query(
          { ...params, limit: 23, page: cursor ? 3 : 0, cursor },
          organizationId,
        );
        const page = await listEvents(db, organizationId, q);
        walked.push(...page.rows.map(parsedItem));
        if (!page.next) break;
        cursor = encodeCursor(q, page.next, await cursorSigner(db));
      }
      const whole = await plainList(db, organizationId, {
        ...(await query(params, organizationId)),
        limit: 10_000,
      });
      expect(walked).toEqual(whole.rows);
    }
  });
});

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
    // Deep pages too: they start at positions kept from before the new events.
    shapes.push(...shapes.map((params) => ({ ...params, page: 60, limit: 7 })));
    for (const params of shapes) await expectSame(acme, params);
    for (const round of [0, 1, 2]) {
      const more = generatedEvents(acme, 40 + round * 30, 100 + round).map((event, i) => ({
        ...event,
        category: i % 9 === 0 ? 'brand-new' : event.category,
      }));
      await insertTestEvents(other, more);
      // On SQLite, imported events reach the description index through the import's batch, not
      // the trigger.
      await insertEventBatch(
        other,
        globex,
        toImport(generatedEvents(globex, 30, 200 + round), `round-${round}`),
      );
      for (const params of shapes) await expectSame(acme, params);
      for (const params of shapes) await expectSame(globex, params);
    }
  });

  it('stay exact when more events arrive in another organization than this one has', async () => {
    // Globex's cached counts are then counted anew (countDeltaBound), and afterwards brought up
    // to date again by the next few of its own.
    const shapes = SHAPES.map(([, params]) => params);
    for (const params of shapes) await expectSame(globex, params);
    const rows = generatedEvents(acme, 1_200, 300);
    for (let i = 0; i < rows.length; i += 400)
      await insertTestEvents(other, rows.slice(i, i + 400));
    for (const params of shapes) await expectSame(globex, params);
    await insertEventBatch(other, globex, toImport(generatedEvents(globex, 12, 301), 'beyond'));
    for (const params of shapes) await expectSame(globex, params);
  });

  it('stay exact while several connections insert at once, in both organizations', async () => {
    // On PostgreSQL the inserts are concurrent transactions; without turns (migration 0003's
    // trigger) a count could be cached through an id whose transaction commits only after a
    // lower one of the same organization. Another organization's writers run beside them.
    const shapes = [{}, search([['category', 'tool']]), search([['description', 'refund']])];
    let writing = true;
    const writers = Array.from({ length: 6 }, async (_, writer) => {
      const organizationId = writer % 2 === 0 ? acme : globex;
      for (let round = 0; round < 15; round += 1) {
        const seed = 1000 + writer * 100 + round;
        const batch = toImport(generatedEvents(organizationId, 50, seed), `w-${seed}`);
        await insertEventBatch(other, organizationId, batch);
      }
    });
    const reader = (async () => {
      while (writing) for (const params of shapes) await listEvents(db, acme, await query(params));
    })();
    await Promise.all(writers);
    writing = false;
    await reader;
    for (const params of shapes) await expectSame(acme, params);
    for (const params of shapes) await expectSame(globex, params);
  });

  it.runIf(onPostgres)(
    "take turns per organization: an open write holds up its own organization's writers only",
    async () => {
      assert(other.kind === 'postgres');
      const held = await other.pool.connect();
      try {
        await held.query('BEGIN');
        await held.query(
          "INSERT INTO events (organization_id, timestamp) VALUES ($1, '2026-09-01T00:00:00.000Z')",
          [acme],
        );
        // Another organization writes while acme's turn is held.
        const globexWrite = insertEventBatch(
          db,
          globex,
          toImport(generatedEvents(globex, 5, 77), 'turn-g'),
        );
        await expect(
          Promise.race([
            globexWrite,
            new Promise((_, reject) => setTimeout(() => reject(new Error('waited')), 5000)),
          ]),
        ).resolves.toBe(5);
        // Acme's next writer waits for the open one.
        let acmeDone = false;
        const acmeWrite = insertEventBatch(
          db,
          acme,
          toImport(generatedEvents(acme, 5, 78), 'turn-a'),
        ).then((n) => ((acmeDone = true), n));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(acmeDone).toBe(false);
        await held.query('COMMIT');
        expect(await acmeWrite).toBe(5);
      } finally {
        held.release();
      }
      for (const organizationId of [acme, globex]) await expectSame(organizationId, {});
    },
  );

  // SQLite only: the FTS5 table is kept by the import and a trigger; PostgreSQL keeps its
  // trigram index itself (the tests below check that it serves the search).
  it.runIf(onSqlite)('leave the description index holding exactly the stored descriptions', () => {
    assert(db.kind === 'sqlite');
    const sqliteDb = db;
    expect(() => checkDescriptionIndex(sqliteDb)).not.toThrow();
  });
});

/** `count` events that all mention "order", one in `every` also "needle". */
function needleEvents(keyPrefix: string, count: number, every: number): EventToImport[] {
  return secondApartEvents(keyPrefix, count, (i) => ({
    sessionId: `s-${i % 97}`,
    description: i % every === 7 ? `A needle in order ${i}` : `Looked up order ${i}`,
  }));
}

describe.runIf(onPostgres)('the trigram index on PostgreSQL', () => {
  it('is what the planner picks for a rare description substring, with the same results', async () => {
    // Enough events that reading them all costs more than the index: a third organization.
    const initech = (await createOrganization(db, 'Initech')).id;
    await insertEventBatch(db, initech, needleEvents('initech', 20_000, 4000));
    // What autovacuum does after a bulk insert: fresh statistics, and the trigram index's pending
    // list merged (until then the planner rightly prices the index higher than a scan).
    await queryTestDb(db, sql`VACUUM (ANALYZE) events`);
    const needle = await query(search([['description', 'NEEDLE']]));
    const conditions = listConditions(needle, initech, {
      columns: eventColumns(db),
      windowColumn: events.timestamp,
      spelling: db.spelling,
    });
    const plan = await planText(
      db,
      sql`SELECT * FROM events WHERE ${and(eq(events.organizationId, initech), ...conditions)}`,
    );
    // Each time partition has its own copy of the index (events_history_description_trgm_idx,
    // events_2026_12_description_idx, ...); the test's events are in one of them.
    expect(plan).toMatch(/Bitmap Index Scan on events_\w*description_(trgm_)?idx/);
    expect(await expectSame(initech, search([['description', 'NEEDLE']]))).toBe(5);
  });
});

describe.runIf(onSqlite)('the trigram index on SQLite', () => {
  it('serves a substring rare beside the organization, not a word common in another', async () => {
    // The index covers every organization: Hooli's "order" everywhere makes it slow for Globex.
    const hooli = (await createOrganization(db, 'Hooli')).id;
    await insertEventBatch(db, hooli, needleEvents('hooli', 4_000, 1000));
    const usesIndex = async (organizationId: number, value: string, organizationCount: number) => {
      const q = await query(search([['description', value]]), organizationId);
      const resolved = await runSteps(db, () =>
        eventListMemory(db).resolveValues(organizationId, q, 0, organizationCount),
      );
      return resolved.trigrams.has(q.filters[0]!);
    };
    expect(await usesIndex(hooli, 'needle', 4_000)).toBe(true);
    expect(await usesIndex(globex, 'order', 700)).toBe(false);
    expect(await usesIndex(hooli, 'order', 4_000)).toBe(false);
    // Two characters have no trigram.
    expect(await usesIndex(hooli, 'ne', 4_000)).toBe(false);
    expect(await expectSame(hooli, search([['description', 'needle']]))).toBe(4);
    expect(await expectSame(globex, search([['description', 'order']]))).toBeGreaterThan(0);
  });
});
