// GET /api/v1/events/stream through a real HTTP server on 127.0.0.1: what it delivers and from
// where, that it matches the list, its refusals before the stream, keep-alives and SLOW_CONSUMER.
// Every message is checked against the spec (support/event-stream.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreams } from '../src/http/event-stream.js';
import {
  createKey,
  createTenant,
  createTestApi,
  type Schemas,
  type TestApi,
} from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { openEventStream, type StreamedEvent } from './support/event-stream.js';
import { sql } from 'drizzle-orm';
import {
  createTestDb,
  insertTestEvents,
  queryTestDb,
  type TestEvent,
} from './support/test-database.js';

let api: TestApi;
let server: LiveServer;
let streams: EventStreams;
let acme: { organizationId: number; key: string };
let globex: { organizationId: number; key: string };
let counter = 0;

const STREAMS_PER_KEY = 3;

beforeAll(async () => {
  const db = await createTestDb();
  streams = new EventStreams(db, {
    perKey: STREAMS_PER_KEY,
    pollMs: 20,
    keepAliveMs: 300,
    bufferBytes: 64 * 1024,
  });
  api = await createTestApi(db, { eventStreams: streams });
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  server = await startLiveServer(api.app);
});

afterAll(async () => {
  streams.close();
  await server.close();
  await api.close();
});

/** Events with distinct types (`t-<n>`), in the order written. */
function someEvents(
  organizationId: number,
  n: number,
  extra: Partial<TestEvent> = {},
): TestEvent[] {
  return Array.from({ length: n }, () => {
    counter += 1;
    return {
      organizationId,
      timestamp: '2026-06-01T00:00:00.000Z',
      type: `t-${counter}`,
      category: counter % 2 === 0 ? 'even' : 'odd',
      sessionId: `s-${counter % 3}`,
      description: `event number ${counter}`,
      attributes: { n: counter, nested: { ok: true } },
      ...extra,
    };
  });
}

const types = (events: StreamedEvent[]) => events.map((event) => event.data.type);

describe('GET /api/v1/events/stream', () => {
  it('delivers events committed after it opened, in commit order, and no other organization', async () => {
    await insertTestEvents(api.db, someEvents(acme.organizationId, 3));
    const stream = await openEventStream(server.baseUrl, { key: acme.key });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const mine = someEvents(acme.organizationId, 5);
    await insertTestEvents(api.db, mine.slice(0, 2));
    await insertTestEvents(api.db, someEvents(globex.organizationId, 4));
    await insertTestEvents(api.db, mine.slice(2));
    const received = await stream.waitFor(5);
    expect(types(received)).toEqual(mine.map((event) => event.type));
    // Whole events, as the list shows them.
    expect(received[0]!.data).toEqual({
      timestamp: '2026-06-01T00:00:00.000Z',
      session_id: mine[0]!.sessionId,
      conversation_id: null,
      source: null,
      source_id: null,
      category: mine[0]!.category,
      type: mine[0]!.type,
      user_id: null,
      description: mine[0]!.description,
      attributes: mine[0]!.attributes,
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stream.events).toHaveLength(5);
    stream.close();
  });

  it('resumes after Last-Event-ID with nothing lost or repeated', async () => {
    const first = await openEventStream(server.baseUrl, { key: acme.key });
    const batch = someEvents(acme.organizationId, 6);
    await insertTestEvents(api.db, batch.slice(0, 3));
    const seen = await first.waitFor(3);
    first.close();
    await insertTestEvents(api.db, batch.slice(3));
    const second = await openEventStream(server.baseUrl, {
      key: acme.key,
      lastEventId: seen[1]!.id,
    });
    const rest = await second.waitFor(4);
    expect(types(rest)).toEqual(batch.slice(2).map((event) => event.type));
    second.close();
  });

  it('replays from start_datetime in commit order, then follows live with the same bound', async () => {
    const org = await createTenant(api.db, 'Replay');
    const at = (timestamp: string) => someEvents(org.organizationId, 1, { timestamp })[0]!;
    const before = [
      at('2026-01-01T00:00:00.000Z'),
      at('2026-03-01T00:00:00.000Z'),
      at('2026-02-01T00:00:00.000Z'),
    ];
    await insertTestEvents(api.db, before);
    const stream = await openEventStream(server.baseUrl, {
      key: org.key,
      query: 'start_datetime=2026-02-01T00:00:00Z',
    });
    expect(types(await stream.waitFor(2))).toEqual([before[1]!.type, before[2]!.type]);
    const later = [at('2025-12-01T00:00:00.000Z'), at('2026-02-15T00:00:00.000Z')];
    await insertTestEvents(api.db, later);
    expect(types(await stream.waitFor(3))).toEqual([
      before[1]!.type,
      before[2]!.type,
      later[1]!.type,
    ]);
    stream.close();
  });

  it('matches and projects exactly what the list returns for the same events', async () => {
    const org = await createTenant(api.db, 'Filters');
    const queries = [
      'search_fields=category&search_field_values=EVEN',
      'search_fields=session_id&search_field_values=s-1&fields=type&fields=attributes',
      `search_fields=description&search_field_values=${encodeURIComponent('number ')}&search_fields=category&search_field_values=d`,
      `search_fields=attributes&search_field_values=${encodeURIComponent('"ok":true')}&fields=session_id`,
      'search_fields=timestamp&search_field_values=2026-06',
      'fields=description',
    ];
    // A key per stream: one key may hold only STREAMS_PER_KEY.
    const opened = await Promise.all(
      queries.map(async (query) =>
        openEventStream(server.baseUrl, {
          key: await createKey(api.db, org.organizationId, ['EVENTS_READ']),
          query,
        }),
      ),
    );
    expect(opened.map((stream) => stream.status)).toEqual(queries.map(() => 200));
    const written = someEvents(org.organizationId, 30);
    await insertTestEvents(api.db, written);
    for (const [index, query] of queries.entries()) {
      const list = await api.request<Schemas['EventListResponse']>(
        'GET',
        `/api/v1/events/?limit=1000&order_by=type&${query}`,
        { key: org.key },
      );
      expect(list.status).toBe(200);
      expect(list.body.total_count, query).toBeGreaterThan(0);
      const streamed = await opened[index]!.waitFor(Number(list.body.total_count));
      // Same events and same projection; the list's order is by type, the stream's by commit.
      const byType = (a: unknown, b: unknown) =>
        String((a as { type?: string }).type ?? JSON.stringify(a)).localeCompare(
          String((b as { type?: string }).type ?? JSON.stringify(b)),
        );
      expect(streamed.map((event) => event.data).sort(byType)).toEqual(
        [...list.body.items].sort(byType),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const [index, query] of queries.entries()) {
      const list = await api.request<Schemas['EventListResponse']>(
        'GET',
        `/api/v1/events/?limit=0&${query}`,
        { key: org.key },
      );
      expect(opened[index]!.events, query).toHaveLength(Number(list.body.total_count));
      opened[index]!.close();
    }
  });

  it('refuses with the ordinary JSON answers before the stream opens', async () => {
    const anonymous = await openEventStream(server.baseUrl, { key: '' });
    expect(anonymous.status).toBe(401);
    const denied = await openEventStream(server.baseUrl, {
      key: await createKey(api.db, acme.organizationId, ['PROMPTS_READ']),
    });
    expect(denied.status).toBe(403);
    expect((denied.body as Schemas['ErrorResponse']).detail).toContain('EVENTS_READ');
    for (const [query, loc] of [
      ['search_fields=type', ['query', 'search_field_values']],
      ['fields=nope', ['query', 'fields', 0]],
      ['start_datetime=yesterday', ['query', 'start_datetime']],
      ['search_fields=nope&search_field_values=x', ['query', 'search_fields', 0]],
    ] as const) {
      const refused = await openEventStream(server.baseUrl, { key: acme.key, query });
      expect(refused.status, query).toBe(422);
      expect((refused.body as Schemas['HTTPValidationError']).detail[0]!.loc).toEqual(loc);
    }
    const badToken = await openEventStream(server.baseUrl, { key: acme.key, lastEventId: 'x1' });
    expect(badToken.status).toBe(422);
    expect((badToken.body as Schemas['HTTPValidationError']).detail[0]!.loc).toEqual([
      'header',
      'Last-Event-ID',
    ]);
  });

  it("refuses a Last-Event-ID past the organization's last event with a 422", async () => {
    const org = await createTenant(api.db, 'Ahead');
    await insertTestEvents(api.db, someEvents(org.organizationId, 2));
    const stream = await openEventStream(server.baseUrl, {
      key: org.key,
      query: 'start_datetime=2026-01-01T00:00:00Z',
    });
    const [, last] = await stream.waitFor(2);
    stream.close();
    // Its own last id resumes (nothing to send yet); a decimal id past every committed event
    // never came from a stream of this database. (Decimal ids from before the upgrade, and
    // those past an organization's last event: events-stream-resume-tokens.test.ts.)
    const resumed = await openEventStream(server.baseUrl, { key: org.key, lastEventId: last!.id });
    expect(resumed.status).toBe(200);
    resumed.close();
    const [highest] = await queryTestDb<{ top: number }>(
      api.db,
      sql`SELECT max(id) AS top FROM events`,
    );
    const ahead = await openEventStream(server.baseUrl, {
      key: org.key,
      lastEventId: String(highest!.top + 1000),
    });
    expect(ahead.status).toBe(422);
    const problem = (ahead.body as Schemas['HTTPValidationError']).detail[0]!;
    expect(problem.loc).toEqual(['header', 'Last-Event-ID']);
    expect(problem.msg).toContain('is not an id this stream sent');
  });

  it('allows EVENT_STREAMS_PER_KEY streams per key, then 429 until one closes', async () => {
    const key = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    const open = await Promise.all(
      Array.from({ length: STREAMS_PER_KEY }, () => openEventStream(server.baseUrl, { key })),
    );
    expect(open.map((stream) => stream.status)).toEqual(open.map(() => 200));
    const extra = await openEventStream(server.baseUrl, { key });
    expect(extra.status).toBe(429);
    expect(extra.headers.get('retry-after')).toBe('1');
    // Another key of the same organization is not held back.
    const other = await openEventStream(server.baseUrl, { key: acme.key });
    expect(other.status).toBe(200);
    other.close();
    open[0]!.close();
    await open[0]!.ended;
    let again = await openEventStream(server.baseUrl, { key });
    for (let tries = 0; again.status === 429 && tries < 50; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await openEventStream(server.baseUrl, { key });
    }
    expect(again.status).toBe(200);
    for (const stream of [...open, again]) stream.close();
  });

  it('sends keep-alive comments while nothing happens', async () => {
    const org = await createTenant(api.db, 'Quiet');
    const stream = await openEventStream(server.baseUrl, { key: org.key });
    await new Promise((resolve) => setTimeout(resolve, 800));
    // One on opening, then one per quiet 300 ms.
    expect(
      stream.comments.filter((comment) => comment.trim() === 'keep-alive').length,
    ).toBeGreaterThanOrEqual(3);
    expect(stream.events).toHaveLength(0);
    stream.close();
  });

  it('ends a client that stops reading with SLOW_CONSUMER, and it resumes with its last id', async () => {
    const org = await createTenant(api.db, 'Slow');
    const stream = await openEventStream(server.baseUrl, { key: org.key, paused: true });
    // More than the kernel's socket buffers hold on loopback, so the server's own buffer fills.
    const written = someEvents(org.organizationId, 3000, { description: 'x'.repeat(8000) });
    for (let i = 0; i < written.length; i += 500) {
      await insertTestEvents(api.db, written.slice(i, i + 500));
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    stream.resume();
    await stream.ended;
    expect(stream.error?.code).toBe('SLOW_CONSUMER');
    expect(stream.events.length).toBeLessThan(written.length);
    const resumed = await openEventStream(server.baseUrl, {
      key: org.key,
      lastEventId: stream.events.at(-1)!.id,
    });
    // A replay goes at the pace its buffer allows (64 KiB here, 8 KB events): given time.
    await resumed.waitFor(written.length - stream.events.length, 30_000);
    expect([...types(stream.events), ...types(resumed.events)]).toEqual(
      written.map((event) => event.type),
    );
    resumed.close();
  });
});
