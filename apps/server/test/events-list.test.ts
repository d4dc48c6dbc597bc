// GET /api/v1/events/: every list rule of docs/decisions.md section 2, tenancy and access. Every
// response is checked against the spec by the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { events } from '../src/db/schema/sqlite.js';
import {
  createKey,
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { insertTestEvents } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;

type Fixture = Partial<typeof events.$inferInsert> & { timestamp: string };

const ACME_EVENTS: Fixture[] = [
  {
    timestamp: '2026-05-01T10:00:00.000Z',
    sessionId: 's-1',
    conversationId: 'c-1',
    source: 'router',
    category: 'session',
    type: 'session-started',
    userId: '+14155550100',
    description: 'Session started on the support line',
    attributes: { agent_id: 7, channel: 'phone' },
  },
  {
    timestamp: '2026-05-01T10:00:05.000Z',
    sessionId: 's-1',
    conversationId: 'c-1',
    source: 'tool',
    sourceId: '12',
    category: 'tool',
    type: 'tool-call',
    userId: '+14155550100',
    description: 'Called lookup_order (50% done)',
    attributes: { tool: 'lookup_order', latency_ms: 120 },
  },
  {
    timestamp: '2026-05-01T10:00:05.000Z',
    sessionId: 's-1',
    conversationId: 'c-1',
    source: 'prompt',
    sourceId: '3',
    category: 'llm',
    type: 'completion',
    userId: '+14155550100',
    description: 'LLM answered',
    attributes: null,
  },
  {
    timestamp: '2026-05-02T08:30:00.000Z',
    sessionId: 's-2',
    conversationId: 'c-2',
    source: 'router',
    category: 'session',
    type: 'session-started',
    userId: '+14155550101',
    description: 'Session started on SMS',
    attributes: { agent_id: 8, channel: 'sms' },
  },
  {
    timestamp: '2026-06-15T23:59:59.999Z',
    sessionId: 's-3',
    conversationId: null,
    source: 'tool',
    sourceId: '12',
    category: 'tool',
    type: 'tool-error',
    userId: null,
    description: 'lookup_order timed out',
    attributes: { tool: 'lookup_order', error: 'timeout' },
  },
  {
    timestamp: '2026-06-16T00:00:00.000Z',
    sessionId: null,
    conversationId: null,
    source: null,
    category: null,
    type: null,
    userId: null,
    description: null,
    attributes: null,
  },
];

const GLOBEX_EVENTS: Fixture[] = [
  {
    timestamp: '2026-05-01T12:00:00.000Z',
    sessionId: 's-1',
    category: 'session',
    type: 'session-started',
    description: 'Globex session started',
    attributes: { secret_project: 'globex' },
  },
];

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  const rows = [
    ...ACME_EVENTS.map((e) => ({ ...e, organizationId: acme.organizationId })),
    ...GLOBEX_EVENTS.map((e) => ({ ...e, organizationId: globex.organizationId })),
  ];
  await insertTestEvents(api.db, rows);
});

afterAll(() => api.close());

/** `T` is the body expected: the page, or the error envelope of a refusal. */
async function list<T = Schemas['EventListResponse']>(query: string, key = acme.key) {
  return api.request<T>('GET', `/api/v1/events/${query}`, { key });
}

const timestamps = (body: { items: Array<{ timestamp: string }> }) =>
  body.items.map((i) => i.timestamp);

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

describe('search', () => {
  it('matches text fields by case-insensitive substring', async () => {
    const res = await list('?search_fields=description&search_field_values=SESSION%20STARTED');
    expect(res.body.items.map((i) => i.session_id)).toEqual(['s-2', 's-1']);
    expect(res.body.total_count).toBe(2);
  });

  it('treats LIKE wildcards in a value as literal characters', async () => {
    const percent = await list('?search_fields=description&search_field_values=50%25');
    expect(percent.body.items.map((i) => i.type)).toEqual(['tool-call']);
    const underscore = await list('?search_fields=type&search_field_values=_');
    expect(underscore.body.total_count).toBe(0);
  });

  it('matches identifiers exactly and case-sensitively', async () => {
    const exact = await list('?search_fields=session_id&search_field_values=s-1');
    expect(exact.body.total_count).toBe(3);
    const partial = await list('?search_fields=session_id&search_field_values=s-');
    expect(partial.body.total_count).toBe(0);
    const user = await list('?search_fields=user_id&search_field_values=%2B14155550101');
    expect(user.body.items.map((i) => i.session_id)).toEqual(['s-2']);
  });

  it('matches date-times by prefix of the ISO text', async () => {
    const month = await list('?search_fields=timestamp&search_field_values=2026-05');
    expect(month.body.total_count).toBe(4);
    const day = await list('?search_fields=timestamp&search_field_values=2026-06-15');
    expect(timestamps(month.body).every((t) => t.startsWith('2026-05'))).toBe(true);
    expect(timestamps(day.body)).toEqual(['2026-06-15T23:59:59.999Z']);
  });

  it('matches object fields by substring of their JSON text', async () => {
    const res = await list('?search_fields=attributes&search_field_values=%22channel%22:%22SMS%22');
    expect(res.body.items.map((i) => i.session_id)).toEqual(['s-2']);
  });

  it('combines several pairs with AND, pairing by index', async () => {
    const res = await list(
      '?search_fields=category&search_fields=source_id&search_field_values=tool&search_field_values=12',
    );
    expect(res.body.items.map((i) => i.type)).toEqual(['tool-error', 'tool-call']);
    const none = await list(
      '?search_fields=category&search_fields=type&search_field_values=session&search_field_values=tool',
    );
    expect(none.body.items).toEqual([]);
  });

  it('takes a comma or brackets in a value literally', async () => {
    const res = await list('?search_fields=type&search_field_values=session-started,tool-call');
    expect(res.body.total_count).toBe(0);
  });

  it('rejects search pairs of different lengths', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?search_fields=type&search_fields=source&search_field_values=x',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['query', 'search_field_values'],
      type: 'value_error',
    });
    expect(res.body.detail[0]?.msg).toContain(
      'search_fields has 2 entries but search_field_values has 1',
    );
  });

  it('rejects an unknown property name and lists the allowed ones', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?search_fields=colour&search_field_values=red',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'search_fields', 0], type: 'enum' });
    expect(res.body.detail[0]?.msg).toContain('"session_id"');
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

describe('fields', () => {
  it('keeps only the listed properties, and always the timestamp', async () => {
    const res = await list('?fields=type&fields=attributes&limit=1');
    expect(res.body.items).toEqual([
      { timestamp: '2026-06-16T00:00:00.000Z', type: null, attributes: null },
    ]);
  });

  it('rejects an unknown field name', async () => {
    const res = await list<Schemas['HTTPValidationError']>('?fields=colour');
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['query', 'fields', 0]);
  });
});

describe('time window', () => {
  it('includes the start and excludes the end', async () => {
    const res = await list(
      '?start_datetime=2026-05-01T10:00:05Z&end_datetime=2026-06-15T23:59:59.999Z',
    );
    expect(timestamps(res.body)).toEqual([
      '2026-05-02T08:30:00.000Z',
      '2026-05-01T10:00:05.000Z',
      '2026-05-01T10:00:05.000Z',
    ]);
  });

  it('understands offsets', async () => {
    // 2026-06-16T02:00+02:00 is midnight UTC, so the last event is excluded.
    const res = await list(
      '?start_datetime=2026-06-15T00:00:00Z&end_datetime=2026-06-16T02:00:00%2B02:00',
    );
    expect(timestamps(res.body)).toEqual(['2026-06-15T23:59:59.999Z']);
  });

  it('rejects a start after the end', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?start_datetime=2026-06-01T00:00:00Z&end_datetime=2026-05-01T00:00:00Z',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['query', 'start_datetime'],
      type: 'value_error',
    });
  });

  it.each(['yesterday', '2026-05-01', '2026-05-01T10:00:00'])(
    'rejects %s (not a date-time with a zone)',
    async (value) => {
      const res = await list<Schemas['HTTPValidationError']>(`?start_datetime=${value}`);
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        loc: ['query', 'start_datetime'],
        type: 'datetime_parsing',
      });
    },
  );
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

describe('tenancy and access', () => {
  it("never shows another organization's events", async () => {
    const own = await list('?limit=1000', globex.key);
    expect(own.body.total_count).toBe(1);
    expect(own.body.items[0]?.description).toBe('Globex session started');
    const acmeSearch = await list('?search_fields=attributes&search_field_values=globex');
    expect(acmeSearch.body).toMatchObject({ items: [], total_count: 0 });
  });

  it('answers 401 without a key, with the decided body and challenge', async () => {
    const res = await api.request<Schemas['ErrorResponse']>('GET', '/api/v1/events/');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({
      code: 'UNAUTHENTICATED',
      request_id: res.headers.get('x-request-id'),
    });
    expect(res.body.detail).toContain('Service-API-Key');
    expect(res.headers.get('www-authenticate')).toBe('ApiKey header="Service-API-Key"');
  });

  it.each([
    ['a malformed key', 'Bearer abc'],
    ['an unknown key', 'agl_zzzzzzzzzzzz_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('answers 401 for %s', async (_, key) => {
    const res = await list<Schemas['ErrorResponse']>('', key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHENTICATED');
  });

  it('answers 401 for a right key id with a wrong secret', async () => {
    const wrongSecret = `${acme.key.slice(0, 17)}${'A'.repeat(32)}`;
    const res = await list('', wrongSecret);
    expect(res.status).toBe(401);
  });

  it('answers 403 naming EVENTS_READ for a key without it, before looking at the input', async () => {
    const key = await createKey(api.db, acme.organizationId, ['PROMPTS_READ']);
    const res = await list<Schemas['ErrorResponse']>('?limit=abc', key);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('PERMISSION_DENIED');
    expect(res.body.detail).toContain('EVENTS_READ');
  });

  it('lets a key with only EVENTS_READ list events', async () => {
    const key = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    expect((await list('', key)).status).toBe(200);
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
    const safe = await api.request('GET', '/api/v1/events/', {
      key: acme.key,
      headers: { 'X-Request-Id': 'trace-123' },
    });
    expect(safe.headers.get('x-request-id')).toBe('trace-123');
    const unsafe = await api.request<Schemas['ErrorResponse']>('GET', '/api/v1/events/', {
      headers: { 'X-Request-Id': 'bad id<script>' },
    });
    expect(unsafe.headers.get('x-request-id')).not.toBe('bad id<script>');
    expect(unsafe.body.request_id).toBe(unsafe.headers.get('x-request-id'));
  });
});
