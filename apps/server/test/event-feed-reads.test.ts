// The live feed reads the new events of every organization it watches in a fixed number of
// statements per tick (db/repositories/event-feed-reads.ts), not in a few statements per
// organization: on PostgreSQL each statement is a round trip that costs the server and the
// database more CPU than the rows it brings, and a server with streams open in many organizations
// polls five times a second. On PostgreSQL its events read is prepared, so each connection plans
// it once, where planning it cost more than running it; and its match of the live searches reads
// the batch from the partitioned table once, not once per search.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createDb, type Db } from '../src/db/engine/client.js';
import { PREPARED_STATEMENTS } from '../src/db/engine/portable-sql.js';
import { migrateDb } from '../src/db/migrate.js';
import { matchStatement, readNewEvents } from '../src/db/repositories/event-feed-reads.js';
import type { FeedEvent } from '../src/db/repositories/events.js';
import { EventFeed } from '../src/runtime/event-feed.js';
import { createTenant, type Tenant } from './support/harness.js';
import { planText } from './support/order-plans.js';
import { recordSqliteReads } from './support/sent-statements.js';
import {
  createTestDb,
  freshDatabaseUrl,
  insertTestEvents,
  onPostgres,
  queryTestDb,
} from './support/test-database.js';

let db: Db;
let tenants: Tenant[];
/** Statements the database was sent since the test began counting. */
let statements = () => 0;

/** Counts every statement the handle runs, on either backend. */
function countStatements(db: Db): void {
  if (db.kind === 'postgres') {
    let sent = 0;
    const query = db.pool.query.bind(db.pool) as (...args: unknown[]) => unknown;
    (db.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      sent += 1;
      return query(...args);
    };
    statements = () => sent;
    return;
  }
  const { reads } = recordSqliteReads(db);
  statements = () => reads.length;
}

beforeAll(async () => {
  db = await createTestDb();
  tenants = [];
  for (let i = 0; i < 8; i += 1) tenants.push(await createTenant(db, `Tenant ${i}`));
  countStatements(db);
});

afterAll(() => db?.close());

const POLL_MS = 20;
const WINDOW_MS = 400;
const everything = { filters: [], window: {}, projection: null };
const sessionsOnly = {
  filters: [{ property: 'type' as const, kind: 'text' as const, value: 'session-started' }],
  window: {},
  projection: null,
};

/** A stream of each tenant's events, and of its session starts, on one feed. */
async function follow(feed: EventFeed<readonly FeedEvent[]>, followed: readonly Tenant[]) {
  const received = followed.map(() => ({ all: [] as number[], sessions: [] as number[] }));
  const sink = (into: number[]) => ({
    send: (events: readonly FeedEvent[]) => {
      into.push(...events.map((event) => event.id));
      return true;
    },
    ready: () => Promise.resolve(Number.POSITIVE_INFINITY),
    fail: (failure: { code: string }) => {
      throw new Error(`unexpected failure ${failure.code}`);
    },
    end: () => undefined,
  });
  const subscriptions = await Promise.all(
    followed.flatMap((tenant, i) => [
      feed.subscribe(tenant.organizationId, everything, 'now', sink(received[i]!.all)),
      feed.subscribe(tenant.organizationId, sessionsOnly, 'now', sink(received[i]!.sessions)),
    ]),
  );
  return { received, close: () => subscriptions.forEach((s) => s.close()) };
}

/** Statements sent while the feed watches `followed`, over WINDOW_MS, with events arriving. */
async function statementsWatching(followed: readonly Tenant[]): Promise<number> {
  const feed = new EventFeed<readonly FeedEvent[]>(db, {
    encode: (events) => events,
    pollMs: POLL_MS,
  });
  const { received, close } = await follow(feed, followed);
  // Every stream live before counting.
  await new Promise((resolve) => setTimeout(resolve, 5 * POLL_MS));
  const before = statements();
  const started = performance.now();
  const written = followed.flatMap((tenant) =>
    ['session-started', 'session-ended'].map((type, i) => ({
      organizationId: tenant.organizationId,
      timestamp: new Date(Date.UTC(2026, 10, 29, 12, 0, i)).toISOString(),
      type,
    })),
  );
  await insertTestEvents(db, written);
  const writes = statements() - before;
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - (performance.now() - started)));
  const sent = statements() - before - writes;
  close();
  feed.close();
  // Each stream got its own organization's events: both, or the session start alone.
  for (const got of received) {
    expect(got.all).toHaveLength(2);
    expect(got.sessions).toEqual([got.all[0]]);
  }
  return sent;
}

describe('the live feed', () => {
  it('reads every watched organization in the same statements each tick', async () => {
    const one = await statementsWatching(tenants.slice(0, 1));
    const eight = await statementsWatching(tenants);
    // About WINDOW_MS / POLL_MS ticks each; read per organization, eight would send eight times
    // the statements of one.
    expect(one).toBeGreaterThan(0);
    expect(eight).toBeLessThan(one * 2);
  });
});

describe.skipIf(!onPostgres || !PREPARED_STATEMENTS)('the live feed on PostgreSQL', () => {
  it('plans its events read once per connection, however many ticks ask it', async () => {
    // One connection, so the prepared statements listed are the ones the reads used.
    const single = createDb(await freshDatabaseUrl(), { poolSize: 1 });
    try {
      await migrateDb(single);
      const tenant = await createTenant(single, 'Feed reads');
      const watched = [{ organizationId: tenant.organizationId, afterId: 0, withRemovals: false }];
      const TICKS = 8;
      for (let tick = 0; tick < TICKS; tick += 1) await readNewEvents(single, watched, 100);
      const reads = await queryTestDb<{ generic: number; custom: number }>(
        single,
        sql`SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements
             WHERE statement LIKE '%CROSS JOIN LATERAL%'`,
      );
      // One statement, prepared once, run by every tick.
      expect(reads).toHaveLength(1);
      expect(Number(reads[0]!.generic) + Number(reads[0]!.custom)).toBe(TICKS);
    } finally {
      await single.close();
    }
  });
});

describe.runIf(onPostgres)("the live feed's matches on PostgreSQL", () => {
  it('read the batch from the events table once, however many searches it matches', async () => {
    const jobs = tenants.slice(0, 4).flatMap(({ organizationId }) =>
      [everything, sessionsOnly].map((query) => ({
        organizationId,
        query,
        afterId: 10,
        throughId: 1_000,
      })),
    );
    const plan = (await planText(db, matchStatement(db, jobs))).split('\n');
    const [partitions] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'events'::regclass`,
    );
    // Each search reads the batch's rows; only the batch's read scans the partitions, once each.
    expect(plan.filter((line) => line.includes('CTE Scan on events')).length).toBe(jobs.length);
    expect(plan.filter((line) => / on events_\w+/.test(line)).length).toBe(partitions!.n);
  });

  it("reads each organization's own batch, however far apart their positions", async () => {
    const [quiet, busy] = [tenants[6]!.organizationId, tenants[7]!.organizationId];
    const at = (i: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, i)).toISOString();
    const idsOf = async (organizationId: number) =>
      (
        await queryTestDb<{ id: number }>(
          db,
          sql`SELECT id FROM events WHERE organization_id = ${organizationId} ORDER BY id`,
        )
      ).map((row) => Number(row.id));
    // The quiet organization's batch is the one event it wrote since its last read; the busy
    // one's, the last two of the fifty it wrote in between.
    await insertTestEvents(db, [{ organizationId: quiet, timestamp: at(0) }]);
    const quietAfter = (await idsOf(quiet)).at(-1)!;
    await insertTestEvents(
      db,
      Array.from({ length: 50 }, (_, i) => ({ organizationId: busy, timestamp: at(i + 1) })),
    );
    await insertTestEvents(db, [{ organizationId: quiet, timestamp: at(60) }]);
    const busyIds = await idsOf(busy);
    const jobs = [
      {
        organizationId: quiet,
        query: everything,
        afterId: quietAfter,
        throughId: (await idsOf(quiet)).at(-1)!,
      },
      {
        organizationId: busy,
        query: everything,
        afterId: busyIds.at(-3)!,
        throughId: busyIds.at(-1)!,
      },
    ];
    const [explained] = await queryTestDb<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      db,
      sql`EXPLAIN (ANALYZE, FORMAT JSON) ${matchStatement(db, jobs)}`,
    );
    // One id range for both would take in the busy organization's fifty events too.
    const batch = nodes(explained!['QUERY PLAN'][0]!.Plan).find(
      (node) => node['Subplan Name'] === 'CTE events',
    );
    expect(batch?.['Actual Rows']).toBe(3);
  });
});

interface PlanNode {
  'Subplan Name'?: string;
  'Actual Rows'?: number;
  Plans?: PlanNode[];
}

/** A plan's nodes, the root first. */
const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
