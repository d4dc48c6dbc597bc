// Cursor paging over HTTP, for the events, prompts and experiments lists on both backends: a walk
// that follows next_cursor, or one page number after another, gives exactly the single-page list
// in every order (ties and NULLs included), new records arriving during a walk cause no
// duplicates or skips, and a cursor that was altered, belongs to another organization or to
// another query is a 422. Some events and experiments have texts longer than a cursor carries
// (domain/list-query.ts, CURSOR_TEXT_CODE_POINTS), sharing a start that long, so only the whole
// text tells their order: every cursor stays within the spec's maxLength, and the next page takes
// the rest up from the item it marks.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import spec from '../src/generated/openapi.json' with { type: 'json' };
import { CURSOR_TEXT_CODE_POINTS } from '../src/domain/list-query.js';
import { ORDER_PREFIX_CHARACTERS } from '../src/db/schema/order-prefix.js';
import { events } from '../src/db/schema/sqlite.js';
import { ACME_RECORDS, loadRecords } from './fixtures/prompts-records.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { stringMatching } from './support/matchers.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;

const propertiesOf = (schema: 'EventProperties' | 'PromptProperties' | 'ExperimentProperties') =>
  (spec.components.schemas[schema] as { enum: string[] }).enum;

/** A page of any of the lists walked here. */
type ListPage =
  Schemas['EventListResponse'] | Schemas['PromptListResponse'] | Schemas['ExperimentListResponse'];

const LISTS = [
  { path: '/api/v1/events/', properties: propertiesOf('EventProperties') },
  { path: '/api/v1/prompts/', properties: propertiesOf('PromptProperties') },
  { path: '/api/v1/experiments/', properties: propertiesOf('ExperimentProperties') },
];

beforeAll(async () => {
  ({ api, acme, globex, fx } = await createRoutingTestbed());
  await loadRecords(api.db, acme.organizationId, ACME_RECORDS);
  // Events with ties on every property and NULLs where a property may be missing.
  await insertTestEvents(
    api.db,
    Array.from({ length: 17 }, (_, i) => ({
      organizationId: acme.organizationId,
      timestamp: `2026-03-0${1 + (i % 3)}T10:00:00.000Z`,
      sessionId: i % 4 === 0 ? null : `session-${i % 3}`,
      userId: i % 5 === 0 ? null : `user-${i % 2}`,
      category: ['call', 'llm', null][i % 3] ?? null,
      type: `type-${i % 2}`,
      description: i % 2 ? `event ${i}` : null,
      attributes: i % 3 ? { n: i % 2 } : null,
    })),
  );
  // Experiments in every state, so the started and stopped times have NULLs and values.
  const agentPairs = [
    [fx.agents.pinned, fx.agents.alsoPinned],
    [fx.agents.unpinned, fx.agents.flawed],
    [fx.agents.pinned, fx.agents.flawed],
  ] as const;
  for (let i = 0; i < 7; i += 1) {
    const target = [fx.targets.main, fx.targets.second, fx.targets.orphan][i % 3]!;
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: {
        ...experimentBody(target, [...agentPairs[i % 3]!]),
        name: `Experiment ${i % 4}`,
        description: i % 2 ? null : `about ${i % 3}`,
      },
    });
    expect(created.status).toBe(200);
    if (i % 3 !== 0) continue;
    // One running per target: start and stop the earlier ones of a target.
    await api.request('POST', `/api/v1/experiments/${created.body.id}/start`, { key: acme.key });
    if (i < 6) {
      await api.request('POST', `/api/v1/experiments/${created.body.id}/stop`, { key: acme.key });
    }
  }
  await insertLongTexts();
});

/** Longer than a cursor carries in code points, in characters of 1 to 6 bytes of JSON each. */
const SHARED_START = 'a é 中 😀 \u0001 '.repeat(CURSOR_TEXT_CODE_POINTS / 4);
/** The long texts differ only past their shared start, in an order other than their insertion's. */
const LONG_TAILS = ['m', 'c', 'x', 'c2', 'a', 'q'];
/** The type of the events with long texts, to search them out. */
const LONG_TYPE = 'long-note';
const CURSOR_MAX_LENGTH = spec.components.parameters.Cursor.schema.maxLength;

/** Acme's events and experiments with long texts. */
async function insertLongTexts() {
  await insertTestEvents(
    api.db,
    LONG_TAILS.map((tail, i) => ({
      organizationId: acme.organizationId,
      timestamp: `2026-03-0${1 + i}T11:00:00.000Z`,
      type: LONG_TYPE,
      description: `${SHARED_START}${'.'.repeat(5000)}${tail}`,
      attributes: { text: `${SHARED_START}${'.'.repeat(5000)}${tail}` },
    })),
  );
  for (const [i, tail] of LONG_TAILS.entries()) {
    const created = await api.request('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: {
        ...experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
        name: `Long ${i}`,
        // Three bytes a character: past 4,096 characters once encoded whole.
        description: `${'中'.repeat(1900)}${tail}`,
      },
    });
    expect(created.status).toBe(200);
  }
}

afterAll(() => api.close());

/** `T` is the body expected: a page of the list, or the errors of a 422. */
async function get<T = ListPage>(url: string, key = acme.key) {
  return api.request<T>('GET', url, { key });
}

/** Every item of the query, following next_cursor `limit` at a time. */
async function walk(path: string, query: string, limit: number) {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null | undefined = null;
  for (let pages = 0; pages < 1000; pages += 1) {
    const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await get(`${path}?${query}&limit=${limit}${after}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.body.items);
    cursor = res.body.next_cursor;
    if (cursor === null) return items;
    // A missing next_cursor fails here too: its length is no number.
    expect(cursor?.length, `${path}?${query}`).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
  }
  throw new Error('the walk did not end');
}

describe.each(LISTS)('$path walked with cursors', ({ path, properties }) => {
  it.each(['asc', 'desc'])('equals the single page in every order (%s)', async (direction) => {
    for (const property of properties) {
      const query = `order_by=${property}&order_by_direction=${direction}`;
      const whole = await get(`${path}?${query}&limit=1000`);
      expect(whole.body.total_count).toBeGreaterThan(2);
      expect(whole.body.next_cursor).toBeNull();
      expect(await walk(path, query, 2), `${path} ${query}`).toEqual(whole.body.items);
    }
  });

  // A page past the middle is read from the other end of the list, in the reverse order.
  it.each(['asc', 'desc'])(
    'by number equals the single page, page by page (%s)',
    async (direction) => {
      for (const property of properties) {
        const query = `order_by=${property}&order_by_direction=${direction}`;
        const whole = await get(`${path}?${query}&limit=1000`);
        const total = whole.body.total_count ?? 0;
        expect(total).toBeGreaterThan(3);
        const pages: unknown[] = [];
        for (let page = 0; page * 3 <= total; page += 1) {
          const res = await get(`${path}?${query}&limit=3&page=${page}`);
          expect(res.body.total_count).toBe(total);
          expect(res.body.next_cursor === null, `${path} ${query} page ${page}`).toBe(
            (page + 1) * 3 >= total,
          );
          pages.push(...res.body.items);
        }
        expect(pages, `${path} ${query}`).toEqual(whole.body.items);
      }
    },
  );

  it('equals the single page in the default order, with a search', async () => {
    const search = 'search_fields=id&search_field_values=1&order_by=id';
    const query = path.includes('events')
      ? 'search_fields=type&search_field_values=type-1'
      : search.replace('search_fields=id&search_field_values=1&', '');
    const whole = await get(`${path}?${query}&limit=1000`);
    expect(await walk(path, query, 3)).toEqual(whole.body.items);
  });
});

describe('a cursor page', () => {
  it('keeps total_count, ignores page and may change limit and fields', async () => {
    const first = await get<Schemas['EventListResponse']>('/api/v1/events/?limit=4');
    const cursor = encodeURIComponent(first.body.next_cursor!);
    const next = await get<Schemas['EventListResponse']>(
      `/api/v1/events/?limit=6&page=9&fields=type&cursor=${cursor}`,
    );
    expect(next.status).toBe(200);
    expect(next.body.total_count).toBe(first.body.total_count);
    expect(next.body.items).toHaveLength(6);
    expect(Object.keys(next.body.items[0]!).sort()).toEqual(['timestamp', 'type']);
    const whole = await get<Schemas['EventListResponse']>('/api/v1/events/?limit=10&fields=type');
    expect(next.body.items).toEqual(whole.body.items.slice(4, 10));
  });

  it('of the last page has next_cursor null, and limit 0 gives none', async () => {
    const all = await get<Schemas['ExperimentListResponse']>('/api/v1/experiments/?limit=1000');
    expect(all.body.next_cursor).toBeNull();
    expect((await get('/api/v1/experiments/?limit=0')).body.next_cursor).toBeNull();
    const offsetPage = await get(`/api/v1/experiments/?limit=2&page=1`);
    const cursorAfter = await get(
      `/api/v1/experiments/?limit=2&cursor=${encodeURIComponent(offsetPage.body.next_cursor!)}`,
    );
    // An offset page's cursor continues right after it.
    expect(cursorAfter.body.items).toEqual(all.body.items.slice(4, 6));
  });
});

describe('records added during a walk', () => {
  it.each([
    ['newest first (new events are before the walk)', ''],
    ['oldest first (new events come at the end)', 'order_by=timestamp&order_by_direction=asc'],
    ['by session (new events land in the middle)', 'order_by=session_id'],
  ])('cause no duplicates and no skips: %s', async (_, query) => {
    const before = await get<Schemas['EventListResponse']>(`/api/v1/events/?${query}&limit=1000`);
    // Events have no id on the wire: the whole item stands for itself.
    const keyOf = (item: unknown) => JSON.stringify(item);
    const seen: string[] = [];
    let cursor: string | null | undefined = null;
    let routed = 0;
    do {
      const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await get<Schemas['EventListResponse']>(
        `/api/v1/events/?${query}&limit=3${after}`,
      );
      seen.push(...res.body.items.map(keyOf));
      cursor = res.body.next_cursor;
      // A session routed between pages logs a new event.
      const session = await api.request(
        'POST',
        `/api/v1/channels/targets/${fx.targets.main}/sessions`,
        { key: acme.key, body: { user_id: `walker-${routed}` } },
      );
      expect(session.status).toBe(200);
      routed += 1;
    } while (cursor !== null);
    const after = await get<Schemas['EventListResponse']>(`/api/v1/events/?${query}&limit=1000`);
    // What the walk saw is the final list less some of the events added during it, in order.
    const beforeKeys = before.body.items.map(keyOf);
    const afterKeys = after.body.items.map(keyOf);
    expect(seen.length).toBeGreaterThanOrEqual(beforeKeys.length);
    expect(seen.length).toBeLessThanOrEqual(beforeKeys.length + routed);
    expect(isSubsequence(seen, afterKeys)).toBe(true);
    expect(isSubsequence(beforeKeys, seen)).toBe(true);
  });
});

/** Whether `part` appears in `whole` in order (not necessarily side by side). */
function isSubsequence(part: readonly string[], whole: readonly string[]): boolean {
  let at = 0;
  for (const item of whole) if (item === part[at]) at += 1;
  return at === part.length;
}

describe('a cursor that does not fit', () => {
  let cursor: string;

  beforeAll(async () => {
    cursor = (await get('/api/v1/events/?limit=2&order_by=user_id')).body.next_cursor!;
  });

  const expectCursorProblem = async (url: string, message: RegExp, key = acme.key) => {
    const res = await get<Schemas['HTTPValidationError']>(url, key);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ['query', 'cursor'], msg: stringMatching(message), type: 'value_error' },
    ]);
  };

  it('altered in any character is a 422', async () => {
    for (const at of [0, 5, cursor.length - 1]) {
      const altered = cursor.slice(0, at) + (cursor[at] === 'A' ? 'B' : 'A') + cursor.slice(at + 1);
      await expectCursorProblem(
        `/api/v1/events/?order_by=user_id&cursor=${encodeURIComponent(altered)}`,
        /altered/,
      );
    }
    await expectCursorProblem('/api/v1/events/?cursor=not-a-cursor', /not a cursor/);
  });

  it('of another organization is a 422', async () => {
    await expectCursorProblem(
      `/api/v1/events/?order_by=user_id&cursor=${encodeURIComponent(cursor)}`,
      /another query/,
      globex.key,
    );
  });

  it('of another query (order, direction, search, window, list) is a 422', async () => {
    for (const query of [
      'order_by=session_id',
      'order_by=user_id&order_by_direction=desc',
      'order_by=user_id&search_fields=type&search_field_values=type-1',
      'order_by=user_id&start_datetime=2026-01-01T00:00:00Z',
    ]) {
      await expectCursorProblem(
        `/api/v1/events/?${query}&cursor=${encodeURIComponent(cursor)}`,
        /another query/,
      );
    }
    await expectCursorProblem(
      `/api/v1/prompts/?order_by=name&cursor=${encodeURIComponent(cursor)}`,
      /another query/,
    );
  });
});

describe('a cursor of a long text', () => {
  it('carries at least the start PostgreSQL indexes, which the next page seeks by', () => {
    expect(CURSOR_TEXT_CODE_POINTS).toBeGreaterThanOrEqual(ORDER_PREFIX_CHARACTERS);
  });

  it('whose item was deleted before the next page continues after its start, skipping nothing', async () => {
    const query = `search_fields=type&search_field_values=${LONG_TYPE}&order_by=description`;
    const whole = await get(`/api/v1/events/?${query}&limit=100`);
    expect(whole.body.items).toHaveLength(LONG_TAILS.length);
    const first = await get(`/api/v1/events/?${query}&limit=1`);
    const marked = first.body.items[0]!.description as string;
    await queryTestDb(api.db, sql`DELETE FROM ${events} WHERE description = ${marked}`);
    const next = await get(
      `/api/v1/events/?${query}&limit=100&cursor=${encodeURIComponent(first.body.next_cursor!)}`,
    );
    expect(next.status).toBe(200);
    expect(next.body.items).toEqual(whole.body.items.slice(1));
  });
});
