// Cursor walks of lists ordered by a long text, on both backends: a cursor carries only the start
// of the last item's text (domain/list-query.ts, CURSOR_TEXT_CODE_POINTS), so it stays within the
// 4,096 characters the spec allows however long the text and however many bytes its characters
// take, and the next page takes the rest up from that item. Texts here share starts longer than
// what a cursor carries, so only the whole text tells their order.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURSOR_TEXT_CODE_POINTS } from '../src/domain/list-query.js';
import { events } from '../src/db/schema/sqlite.js';
import type { Tenant, TestApi } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

/** Longer than a cursor carries in code points, in characters of 1 to 6 bytes of JSON each. */
const SHARED_START = 'a é 中 😀 \u0001 '.repeat(CURSOR_TEXT_CODE_POINTS / 4);
/** Texts that differ only past the shared start, in an order other than their insertion's. */
const TAILS = ['m', 'c', 'x', 'c2', 'a', 'q'];

type Page = { items: Array<Record<string, unknown>>; next_cursor: string | null };

/** Every item of `path` in `query`'s order, one page at a time, following next_cursor. */
async function walk(path: string, query: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const url: string = `${path}?${query}&limit=1${cursor ? `&cursor=${cursor}` : ''}`;
    const res = await api.request<Page>('GET', url, { key: acme.key });
    expect(res.status, `${url}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
    items.push(...res.body.items);
    cursor = res.body.next_cursor;
    if (cursor !== null) expect(cursor.length).toBeLessThanOrEqual(4096);
  } while (cursor !== null && items.length <= TAILS.length);
  return items;
}

async function allInOnePage(path: string, query: string) {
  const res = await api.request<Page>('GET', `${path}?${query}&limit=100`, { key: acme.key });
  expect(res.status).toBe(200);
  return res.body.items;
}

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
  await insertTestEvents(
    api.db,
    TAILS.map((tail, i) => ({
      organizationId: acme.organizationId,
      timestamp: `2026-03-0${1 + i}T10:00:00.000Z`,
      type: 'note',
      description: `${SHARED_START}${'.'.repeat(5000)}${tail}`,
      attributes: { text: `${SHARED_START}${'.'.repeat(5000)}${tail}` },
    })),
  );
  for (const [i, tail] of TAILS.entries()) {
    const created = await api.request('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: {
        ...experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
        name: `Experiment ${i}`,
        // Three bytes a character: past 4,096 characters once encoded whole.
        description: `${'中'.repeat(1900)}${tail}`,
      },
    });
    expect(created.status).toBe(200);
  }
});

afterAll(() => api.close());

describe.each([
  { path: '/api/v1/events/', property: 'description' },
  { path: '/api/v1/events/', property: 'attributes' },
  { path: '/api/v1/experiments/', property: 'description' },
])('$path ordered by $property', ({ path, property }) => {
  it.each(['asc', 'desc'])(
    'walks every page %s with cursors under 4,096 characters',
    async (direction) => {
      const query = `order_by=${property}&order_by_direction=${direction}`;
      const whole = await allInOnePage(path, query);
      expect(whole).toHaveLength(TAILS.length);
      expect(await walk(path, query)).toEqual(whole);
    },
  );
});

describe('a cursor whose item was deleted before the next page', () => {
  it('continues after the text the cursor carries, skipping nothing', async () => {
    const query = 'order_by=description&order_by_direction=asc';
    const whole = await allInOnePage('/api/v1/events/', query);
    const first = await api.request<Page>('GET', `/api/v1/events/?${query}&limit=1`, {
      key: acme.key,
    });
    const marked = first.body.items[0]!.description as string;
    await queryTestDb(api.db, sql`DELETE FROM ${events} WHERE description = ${marked}`);
    const next = await api.request<Page>(
      'GET',
      `/api/v1/events/?${query}&limit=100&cursor=${first.body.next_cursor}`,
      { key: acme.key },
    );
    expect(next.status).toBe(200);
    expect(next.body.items).toEqual(whole.slice(1));
  });
});
