// GET /api/v1/events/: the page itself (docs/decisions.md section 2): the default page, order,
// paging, and the items' text and attributes as stored. Every response is checked against the spec
// by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventsList, timestamps, type EventsList } from './support/events-list-fixture.js';
import { createTenant, type Schemas } from './support/harness.js';
import { insertTestEvents } from './support/test-database.js';

let api: EventsList['api'];
let list: EventsList['list'];

beforeAll(async () => {
  ({ api, list } = await openEventsList());
});

afterAll(() => api.close());

describe('default page', () => {
  it("lists the organization's events newest first with every field and the envelope", async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ page: 0, page_size: 25, total_count: 6, total_pages: 1 });
    expect(timestamps(res.body)).toEqual([
      '2026-06-16T00:00:00.000Z',
      '2026-06-15T23:59:59.999Z',
      '2026-05-02T08:30:00.000Z',
      '2026-05-01T10:00:05.000Z',
      '2026-05-01T10:00:05.000Z',
      '2026-05-01T10:00:00.000Z',
    ]);
    expect(res.body.items[5]).toEqual({
      timestamp: '2026-05-01T10:00:00.000Z',
      session_id: 's-1',
      conversation_id: 'c-1',
      source: 'router',
      source_id: null,
      category: 'session',
      type: 'session-started',
      user_id: '+14155550100',
      description: 'Session started on the support line',
      attributes: { agent_id: 7, channel: 'phone' },
    });
    expect(res.headers.get('x-request-id')).toMatch(/.+/);
  });

  it('breaks timestamp ties by insertion order in the same direction', async () => {
    const res = await list('');
    // The two events at 10:00:05 come newest-inserted first when descending...
    expect(res.body.items[3]?.type).toBe('completion');
    expect(res.body.items[4]?.type).toBe('tool-call');
    const asc = await list('?order_by=timestamp');
    // ...and oldest-inserted first when ascending.
    expect(asc.body.items.slice(1, 3).map((i) => i.type)).toEqual(['tool-call', 'completion']);
  });
});

describe('order', () => {
  it('orders by any property in either direction, the primary key breaking ties', async () => {
    const asc = await list('?order_by=category&order_by_direction=asc');
    expect(asc.body.items.map((i) => i.category)).toEqual([
      null,
      'llm',
      'session',
      'session',
      'tool',
      'tool',
    ]);
    // Ties (two "session", two "tool") keep insertion order ascending...
    expect(asc.body.items[2]?.session_id).toBe('s-1');
    expect(asc.body.items[3]?.session_id).toBe('s-2');
    const desc = await list('?order_by=category&order_by_direction=desc');
    // ...and reverse it descending: the whole list is the exact reverse.
    expect(desc.body.items).toEqual([...asc.body.items].reverse());
  });

  it('defaults the direction to asc when order_by is given', async () => {
    const res = await list('?order_by=timestamp');
    expect(timestamps(res.body)[0]).toBe('2026-05-01T10:00:00.000Z');
  });

  it('never repeats or skips an item across pages of tied values', async () => {
    const seen: string[] = [];
    for (let page = 0; page < 6; page += 1) {
      const res = await list(`?order_by=category&limit=1&page=${page}`);
      seen.push(JSON.stringify(res.body.items[0]));
    }
    const whole = await list('?order_by=category');
    expect(seen).toEqual(whole.body.items.map((i) => JSON.stringify(i)));
  });

  it('rejects an unknown order_by or direction', async () => {
    const field = await list<Schemas['HTTPValidationError']>('?order_by=colour');
    expect(field.status).toBe(422);
    expect(field.body.detail[0]?.loc).toEqual(['query', 'order_by']);
    const direction = await list<Schemas['HTTPValidationError']>(
      '?order_by=type&order_by_direction=up',
    );
    expect(direction.status).toBe(422);
    expect(direction.body.detail[0]).toMatchObject({
      loc: ['query', 'order_by_direction'],
      type: 'enum',
    });
  });
});

describe('text as stored', () => {
  it('returns every character of the text and the attributes exactly as stored', async () => {
    // The database renders the items' JSON (listEvents) and listPageJson splices it into the
    // page: quotes, backslashes, control characters, characters beyond ASCII, `$` replacement
    // patterns and nested attributes must all come back unchanged.
    const initech = await createTenant(api.db, 'Initech');
    const description = 'He said "refund" \\ twice,\nthen\ttabbed \u0001 — Émile 😀, $& $` $\' $$';
    const attributes = {
      quote: 'a "b" \\ c',
      nested: { list: [1, 2.5, -3e-7, true, null, 'ü'], empty: {} },
      big: 9007199254740991,
    };
    await insertTestEvents(api.db, [
      {
        organizationId: initech.organizationId,
        timestamp: '2026-05-01T10:00:00.000Z',
        sessionId: 'line\nbreak',
        description,
        attributes,
      },
    ]);
    const res = await list('', initech.key);
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      {
        timestamp: '2026-05-01T10:00:00.000Z',
        session_id: 'line\nbreak',
        conversation_id: null,
        source: null,
        source_id: null,
        category: null,
        type: null,
        user_id: null,
        description,
        attributes,
      },
    ]);
  });
  it('renders the same bytes on either database: compact JSON, as JSON.stringify writes it', async () => {
    const initech = await createTenant(api.db, 'Initech Bytes');
    await insertTestEvents(api.db, [
      {
        organizationId: initech.organizationId,
        timestamp: '2026-05-01T10:00:00.000Z',
        description: 'quote " backslash \\ newline \n tab \t bell \u0007 é 😀',
        attributes: { a: [1, 2.5, { b: null }], 'key "q"': 'v\u0001' },
      },
    ]);
    const response = await api.app.request('/api/v1/events/', {
      headers: { 'Service-API-Key': initech.key },
    });
    const text = await response.text();
    expect(text).toBe(JSON.stringify(JSON.parse(text)));
    expect(text).toContain('"items":[{"timestamp":"2026-05-01T10:00:00.000Z","session_id":null,');
  });
});

describe('paging', () => {
  it('pages with limit and page and reports the totals', async () => {
    const res = await list('?limit=4&page=1');
    expect(res.body).toMatchObject({ page: 1, page_size: 4, total_count: 6, total_pages: 2 });
    expect(res.body.items).toHaveLength(2);
  });

  it('answers a page past the end with no items', async () => {
    const res = await list('?limit=4&page=9');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ items: [], page: 9, total_count: 6, total_pages: 2 });
  });

  it('with limit 0 returns counts only and no total_pages', async () => {
    const res = await list('?limit=0');
    expect(res.body).toEqual({
      items: [],
      page: 0,
      page_size: 0,
      total_count: 6,
      total_pages: null,
      next_cursor: null,
    });
  });

  it('accepts limit 1000 and rejects 1001', async () => {
    expect((await list('?limit=1000')).status).toBe(200);
    const res = await list<Schemas['HTTPValidationError']>('?limit=1001');
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'limit'], type: 'less_than_equal' });
  });

  it.each([
    ['?page=-1', 'page', 'greater_than_equal'],
    ['?limit=-1', 'limit', 'greater_than_equal'],
    ['?limit=abc', 'limit', 'int_parsing'],
    ['?limit=2.5', 'limit', 'int_parsing'],
    ['?limit=', 'limit', 'int_parsing'],
    ['?page=1e3', 'page', 'int_parsing'],
  ])('rejects %s', async (query, name, type) => {
    const res = await list<Schemas['HTTPValidationError']>(query);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query', name], type });
  });

  it('ignores unknown query parameters', async () => {
    const res = await list('?colour=red');
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(6);
  });
});
