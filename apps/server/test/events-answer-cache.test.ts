// Events list answers are kept per organization and query string while the organization's
// highest event id is unchanged: a repeated page is answered without reading it again, and an
// event committed by another connection (another process, the import) shows at the next request.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { replayEvents } from '../src/db/repositories/events.js';
import { listEvents } from '../src/runtime/event-list-memory.js';
import type { EventReaders } from '../src/runtime/event-readers.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { freshDatabaseUrl, insertTestEvents } from './support/test-database.js';

type Page = Schemas['EventListResponse'];

let api: TestApi;
/** A second connection to the same database, as another process would have. */
let other: Db;
let acme: Tenant;
let globex: Tenant;
/** Pages the app asked the readers for (the readers read them inline, on the real database). */
let pagesRead = 0;

const event = (organizationId: number, minute: number, category = 'session') => ({
  organizationId,
  timestamp: `2026-05-01T10:${String(minute).padStart(2, '0')}:00.000Z`,
  category,
  description: `event at minute ${minute}`,
});

beforeAll(async () => {
  const url = await freshDatabaseUrl();
  const db = createDb(url);
  await migrateDb(db);
  other = createDb(url);
  const readers: EventReaders = {
    listEvents: ({ organizationId, query }) => {
      pagesRead += 1;
      return listEvents(db, organizationId, query);
    },
    replayEvents: (job) => replayEvents(db, job),
    close: async () => {},
  };
  api = await createTestApi(db, { eventReaders: readers });
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  await insertTestEvents(other, [
    event(acme.organizationId, 1),
    event(acme.organizationId, 2, 'llm'),
    event(acme.organizationId, 3),
    event(globex.organizationId, 4),
  ]);
});

afterAll(async () => {
  await other.close();
  await api.close();
});

const list = (query = '', key = acme.key) =>
  api.request<Page>('GET', `/api/v1/events/${query}`, { key });

/** The request's answer and how many pages the app read for it. */
async function listCounting(query = '', key = acme.key) {
  const before = pagesRead;
  const response = await list(query, key);
  expect(response.status).toBe(200);
  return { body: response.body, pagesRead: pagesRead - before };
}

describe('events answer cache', () => {
  it('answers a repeated query without reading its page again', async () => {
    const first = await listCounting('?limit=2');
    const second = await listCounting('?limit=2');
    expect(first.pagesRead).toBe(1);
    expect(second.pagesRead).toBe(0);
    expect(second.body).toEqual(first.body);
    expect(second.body.total_count).toBe(3);
  });

  it('shows an event committed by another connection at the next request', async () => {
    await listCounting();
    await insertTestEvents(other, [event(acme.organizationId, 5)]);
    const after = await listCounting();
    expect(after.pagesRead).toBe(1);
    expect(after.body.total_count).toBe(4);
    expect(after.body.items[0]!.description).toBe('event at minute 5');
  });

  it('keeps answers of different queries, projections and organizations apart', async () => {
    const sessions = await listCounting('?search_fields=category&search_field_values=session');
    const llm = await listCounting('?search_fields=category&search_field_values=llm');
    expect(sessions.body.items.map((e) => e.category)).toEqual(['session', 'session', 'session']);
    expect(llm.body.items.map((e) => e.category)).toEqual(['llm']);
    const named = await listCounting('?fields=category');
    const described = await listCounting('?fields=description');
    expect(Object.keys(named.body.items[0]!)).toEqual(['timestamp', 'category']);
    expect(Object.keys(described.body.items[0]!)).toEqual(['timestamp', 'description']);
    // Kept by each parameter's values in the order sent: the same fields in another order are
    // read once more, then kept as well, and answer alike.
    const both = await listCounting('?fields=category&fields=description');
    const reordered = await listCounting('?fields=description&fields=category');
    expect([both.pagesRead, reordered.pagesRead]).toEqual([1, 1]);
    expect((await listCounting('?fields=description&fields=category')).pagesRead).toBe(0);
    expect(reordered.body).toEqual(both.body);
    const theirs = await listCounting('', globex.key);
    expect(theirs.body.items.map((e) => e.description)).toEqual(['event at minute 4']);
  });

  it('shares one entry among the spellings of a query', async () => {
    const first = await listCounting('?limit=2&page=1');
    expect(first.pagesRead).toBe(1);
    // Parameters in another order, parameters the list does not take, a name percent-encoded:
    // the query the validator reads is the same, and so is the kept answer.
    for (const spelling of [
      '?page=1&limit=2',
      '?limit=2&page=1&x=9',
      '?x=1&page=1&y=2&limit=2',
      '?l%69mit=2&page=1',
    ]) {
      const again = await listCounting(spelling);
      expect([spelling, again.pagesRead]).toEqual([spelling, 0]);
      expect(again.body).toEqual(first.body);
    }
    // The values of repeated names keep their order: search pairs match by position.
    const byCategory = await listCounting(
      '?search_fields=category&search_fields=description&search_field_values=session&search_field_values=minute 3',
    );
    const swapped = await listCounting(
      '?search_fields=category&search_fields=description&search_field_values=minute 3&search_field_values=session',
    );
    expect([byCategory.pagesRead, swapped.pagesRead]).toEqual([1, 1]);
    expect(byCategory.body.items.map((e) => e.description)).toEqual(['event at minute 3']);
    expect(swapped.body.items).toEqual([]);
  });

  it('validates a query string every time until it has been answered', async () => {
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await list('?limit=1001');
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ detail: [{ loc: ['query', 'limit'] }] });
    }
    // A valid query kept, then the same parameters with one more that is invalid: refused.
    expect((await listCounting('?limit=1')).pagesRead).toBe(1);
    expect((await list('?limit=1&order_by=nothing')).status).toBe(422);
  });

  it('reads cursor pages every time', async () => {
    const first = await listCounting('?limit=1');
    const cursor = encodeURIComponent(first.body.next_cursor!);
    expect((await listCounting(`?limit=1&cursor=${cursor}`)).pagesRead).toBe(1);
    expect((await listCounting(`?limit=1&cursor=${cursor}`)).pagesRead).toBe(1);
    // The cursor first in the query string is a cursor page all the same.
    expect((await listCounting(`?cursor=${cursor}&limit=1`)).pagesRead).toBe(1);
    expect((await listCounting(`?cursor=${cursor}&limit=1`)).pagesRead).toBe(1);
    // However its name is spelled.
    expect((await listCounting(`?limit=1&c%75rsor=${cursor}`)).pagesRead).toBe(1);
    expect((await listCounting(`?limit=1&c%75rsor=${cursor}`)).pagesRead).toBe(1);
  });
});
