// Event retention on a real server process and database (a SQLite file or PostgreSQL): the
// server's own sweep at start-up, a sweep beside routing that removes exactly the events older
// than the window, lists, counts and kept answers exact after it, and positions that retention
// overtook answered with the decided errors (a stream's 410, a webhook replay's 422).

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, GoneError } from '@agentline/sdk';
import { runCli } from '../src/cli/run.js';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import type { FeedEvent } from '../src/db/repositories/events.js';
import { EventFeed } from '../src/runtime/event-feed.js';
import type { FeedFailure, FeedStart } from '../src/runtime/feed-subscription.js';
import { sweepExpiredEvents } from '../src/use-cases/event-retention.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { resumeTokenOf } from './support/event-stream.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { call, createEndpoint, routeSessions } from './support/webhook-delivery-testbed.js';
import {
  checkDescriptionIndex,
  freshDatabaseUrl,
  insertTestEvents,
  onSqlite,
  queryTestDb,
  type TestEvent,
} from './support/test-database.js';

const DAY_MS = 86_400_000;
const NOW = Date.now();
const daysAgo = (days: number) => new Date(NOW - days * DAY_MS).toISOString();

let databaseUrl: string;
let db: Db;
/** Keeps 5 days, set while the server runs; routed sessions write its new events. */
let acme: Tenant;
/** Follows the server's EVENT_RETENTION_DAYS (30). */
let globex: Tenant;
/** Keeps every event (0), whatever the server's default. */
let initech: Tenant;
let fx: RoutingFixture;
let server: ServerProcess;

/** `count` events a hundredth of a day apart in age from `newestDays` ago back; a third billing. */
function agedEvents(organizationId: number, count: number, newestDays: number): TestEvent[] {
  return Array.from({ length: count }, (_, i) => ({
    organizationId,
    timestamp: new Date(NOW - newestDays * DAY_MS - i * (DAY_MS / 100)).toISOString(),
    category: i % 3 === 0 ? 'billing' : 'session',
    type: 'aged',
    description: `aged event ${i}`,
  }));
}

const acmeEvents = () => agedEvents(acme.organizationId, 2000, 1);

/** Collects what is written to it, as text. */
class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

async function cli(args: string[]): Promise<{ code: number; stderr: string }> {
  const stderr = new Collect();
  const code = await runCli(args, {
    stdout: new Collect(),
    stderr,
    env: { DATABASE_URL: databaseUrl },
  });
  return { code, stderr: stderr.text };
}

async function count(organizationId: number, condition = sql`TRUE`): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(
    db,
    sql`SELECT count(*) AS n FROM events WHERE organization_id = ${organizationId} AND ${condition}`,
  );
  return Number(row!.n);
}

async function tally(organizationId: number): Promise<{ removed: number; through: number }> {
  const [row] = await queryTestDb<{ removed: number; through: number }>(
    db,
    sql`SELECT events_removed AS removed, events_removed_through AS through
        FROM organizations WHERE id = ${organizationId}`,
  );
  return { removed: Number(row!.removed), through: Number(row!.through) };
}

async function get<T>(tenant: Tenant, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: { 'Service-API-Key': tenant.key, ...headers },
  });
  const streaming = response.headers.get('content-type')?.startsWith('text/event-stream');
  if (streaming) await response.body?.cancel();
  return { status: response.status, body: (streaming ? null : await response.json()) as T };
}

const totalCount = async (tenant: Tenant, query = '') =>
  (await get<Schemas['EventListResponse']>(tenant, `/api/v1/events/?limit=1${query}`)).body
    .total_count;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  globex = await createTenant(db, 'Globex');
  initech = await createTenant(db, 'Initech');
  fx = await loadRoutingFixture(db, acme.organizationId);
  // Acme: 2,000 events from 1 to 21 days old; Globex and Initech: 100 from 25 to 26 days old and
  // 100 from 40 to 41.
  await insertTestEvents(db, acmeEvents());
  for (const { organizationId } of [globex, initech]) {
    await insertTestEvents(db, [
      ...agedEvents(organizationId, 100, 25),
      ...agedEvents(organizationId, 100, 40),
    ]);
  }
  expect((await cli(['org', 'set', 'Initech', '--event-retention-days', '0'])).code).toBe(0);
  server = await startServerProcess({ DATABASE_URL: databaseUrl, EVENT_RETENTION_DAYS: '30' });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await db.close();
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

describe('the server sweep', () => {
  it('removes, at start-up, the events older than each organization window', async () => {
    // The sweep starts with the server; its first pass is over within moments.
    await expect.poll(() => count(globex.organizationId), { timeout: 10_000 }).toBe(100);
    expect(await count(globex.organizationId, sql`timestamp < ${daysAgo(30)}`)).toBe(0);
    expect(await tally(globex.organizationId)).toMatchObject({ removed: 100 });
    // Initech keeps every event; Acme has no event past 30 days.
    expect(await count(initech.organizationId)).toBe(200);
    expect(await count(acme.organizationId)).toBe(2000);
    expect(await totalCount(globex)).toBe(100);
  });
});

describe('a sweep beside routing', () => {
  it('removes exactly the events older than the window, and lists and counts stay exact', async () => {
    const billing = '&search_fields=category&search_field_values=billing';
    // Kept answers and cached counts from before the sweep, which must not be served after it.
    expect(await totalCount(acme)).toBe(2000);
    expect(await totalCount(acme, billing)).toBe(667);
    const routedBefore = await count(acme.organizationId, sql`type <> 'aged'`);

    const set = await cli(['org', 'set', 'Acme', '--event-retention-days', '5']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain('organization "Acme" now keeps events for 5 days');
    const cutoff = daysAgo(5);
    const expiring = acmeEvents().filter((event) => event.timestamp < cutoff).length;
    expect(expiring).toBe(1599);
    const [{ top: highestExpiring }] = (await queryTestDb<{ top: number }>(
      db,
      sql`SELECT max(id) AS top FROM events
          WHERE organization_id = ${acme.organizationId} AND timestamp < ${cutoff}`,
    )) as [{ top: number }];
    // Small batches, so the sweep's transactions interleave with routing's writes.
    const [removed] = await Promise.all([
      sweepExpiredEvents(db, { defaultDays: 30, now: NOW, batchSize: 50 }),
      routeSessions(server.baseUrl, acme, fx, 40),
    ]);
    // The server may have swept some itself in the meantime (its sweep runs every minute).
    const { removed: tallied, through } = await tally(acme.organizationId);
    expect(tallied).toBe(expiring);
    expect(removed).toBeLessThanOrEqual(expiring);

    expect(await count(acme.organizationId, sql`timestamp < ${cutoff}`)).toBe(0);
    expect(await count(acme.organizationId, sql`type = 'aged'`)).toBe(2000 - expiring);
    const routed = await count(acme.organizationId, sql`type <> 'aged'`);
    expect(routed).toBeGreaterThan(routedBefore);
    const kept = await count(acme.organizationId);
    expect(kept).toBe(2000 - expiring + routed);
    expect(through).toBe(Number(highestExpiring));

    // The same queries as before the sweep: nothing kept from before it is served.
    expect(await totalCount(acme)).toBe(kept);
    expect(await totalCount(acme, billing)).toBe(
      await count(acme.organizationId, sql`category = 'billing'`),
    );
    const oldest = await get<Schemas['EventListResponse']>(
      acme,
      '/api/v1/events/?order_by=timestamp&order_by_direction=asc&limit=5',
    );
    expect(oldest.body.items[0]!.timestamp >= cutoff).toBe(true);
    // The description index lost exactly the removed events' entries (SQLite's is kept by hand).
    if (db.kind === 'sqlite') checkDescriptionIndex(db);
    expect(
      await totalCount(acme, '&search_fields=description&search_field_values=aged+event+19'),
    ).toBe(await count(acme.organizationId, sql`description LIKE '%aged event 19%'`));
    // Other organizations are untouched by Acme's window.
    expect(await count(initech.organizationId)).toBe(200);
  });

  it('answers 410 to a stream resumed before a removed event, and 422 to such a replay', async () => {
    const { through } = await tally(acme.organizationId);
    expect(through).toBeGreaterThan(0);
    const stale = await resumeTokenOf(db, acme.organizationId, through - 1);
    const gone = await get<Schemas['ErrorResponse']>(acme, '/api/v1/events/stream', {
      'Last-Event-ID': stale,
    });
    expect(gone.status).toBe(410);
    expect(gone.body.code).toBe('GONE');
    expect(gone.body.detail).toContain('start_datetime');
    // From the highest removed id on, nothing removed lies ahead: the stream opens.
    const fresh = await resumeTokenOf(db, acme.organizationId, through);
    expect((await get(acme, '/api/v1/events/stream', { 'Last-Event-ID': fresh })).status).toBe(200);

    // The SDK, as a customer's code resumes: the 410 throws GoneError, which says what to do.
    const client = createClient({ apiKey: acme.key, baseUrl: server.baseUrl });
    // Were it accepted, the signal would end the loop quietly and `thrown` would be null.
    const resumed = client.events.stream(
      {},
      { lastEventId: stale, signal: AbortSignal.timeout(5_000) },
    );
    const thrown = await (async () => {
      for await (const _event of resumed) return null;
      return null;
    })().catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(GoneError);
    expect((thrown as GoneError).message).toContain('start_datetime');

    const { id } = await createEndpoint(server.baseUrl, acme, {
      url: 'https://8.8.8.8/agentline',
      enabled: false,
      search_fields: [],
      search_field_values: [],
      message_types: ['event'],
    });
    const replay = (afterPosition: string) =>
      call<Schemas['HTTPValidationError']>(
        server.baseUrl,
        acme,
        'POST',
        `/api/v1/webhooks/endpoints/${id}/replay`,
        { after_position: afterPosition },
      );
    const refused = await replay(stale);
    expect(refused.status).toBe(422);
    const problem = refused.body.detail;
    expect(problem[0]!.loc).toEqual(['body', 'after_position']);
    expect(problem[0]!.msg).toContain('retention');
    expect((await replay(fresh)).status).toBe(200);
  });
});

describe('agentline org set', () => {
  it('refuses a window that is not a number of days, and names the fix', async () => {
    for (const bad of ['-1', '1.5', 'forever', '36501']) {
      const { code, stderr } = await cli(['org', 'set', 'Acme', '--event-retention-days', bad]);
      expect(code).toBe(2);
      expect(stderr).toContain('--event-retention-days must be a whole number of days');
    }
    const unknown = await cli(['org', 'set', 'Nobody', '--event-retention-days', '5']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('Nobody');
  });

  it('goes back to the server default', async () => {
    const { code, stderr } = await cli([
      'org',
      'set',
      'Initech',
      '--event-retention-days',
      'default',
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain("follows the server's EVENT_RETENTION_DAYS");
    const [row] = await queryTestDb<{ days: number | null }>(
      db,
      sql`SELECT event_retention_days AS days FROM organizations WHERE id = ${initech.organizationId}`,
    );
    expect(row!.days).toBeNull();
  });
});

describe('the live feed', () => {
  /** A subscriber of Acme's events from `start` that records what it hears. */
  async function follow(feed: EventFeed<readonly FeedEvent[]>, start: FeedStart) {
    const heard = { ids: [] as number[], failure: null as FeedFailure | null };
    await feed.subscribe(
      acme.organizationId,
      { filters: [], window: {}, projection: null },
      start,
      {
        send: (events) => (heard.ids.push(...events.map((event) => event.id)), true),
        ready: () => Promise.resolve(Number.POSITIVE_INFINITY),
        fail: (failure) => (heard.failure = failure),
        end: () => undefined,
      },
    );
    return heard;
  }

  it('ends a stream with GONE when an event it was not sent yet is removed', async () => {
    const [{ top }] = (await queryTestDb<{ top: number }>(
      db,
      sql`SELECT max(id) AS top FROM events WHERE organization_id = ${acme.organizationId}`,
    )) as [{ top: number }];
    // An event that arrives already older than Acme's 5 days, removed before any stream read it.
    await insertTestEvents(db, [
      { organizationId: acme.organizationId, timestamp: daysAgo(6), type: 'expired-on-arrival' },
    ]);
    const [{ expired }] = (await queryTestDb<{ expired: number }>(
      db,
      sql`SELECT id AS expired FROM events
          WHERE organization_id = ${acme.organizationId} AND type = 'expired-on-arrival'`,
    )) as [{ expired: number }];
    await sweepExpiredEvents(db, { defaultDays: 30, now: Date.now() });
    expect((await tally(acme.organizationId)).through).toBe(Number(expired));
    await insertTestEvents(db, [
      { organizationId: acme.organizationId, timestamp: daysAgo(0), type: 'kept' },
    ]);
    const feed = new EventFeed<readonly FeedEvent[]>(db, {
      encode: (events) => events,
      pollMs: 20,
    });
    try {
      const resumed = await follow(feed, { afterId: Number(top) });
      const webhook = await follow(feed, { afterId: Number(top), skipsRemoved: true });
      const fromStart = await follow(feed, { afterId: 0 });
      await expect.poll(() => resumed.failure?.code, { timeout: 5_000 }).toBe('GONE');
      expect(resumed.failure!.detail).toContain('start_datetime');
      expect(resumed.ids).toEqual([]);
      // An endpoint skips what was removed and goes on; a replay from the start missed nothing
      // that was kept when it began.
      await expect.poll(() => webhook.ids.length, { timeout: 5_000 }).toBe(1);
      expect(webhook.failure).toBeNull();
      await expect
        .poll(() => fromStart.ids.length, { timeout: 5_000 })
        .toBe(await count(acme.organizationId));
      expect(fromStart.failure).toBeNull();
    } finally {
      feed.close();
    }
  });
});
