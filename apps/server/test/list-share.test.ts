// List reads have their own share of the database: PostgreSQL's pool is split (DATABASE_POOL_SIZE
// = 4 gives 2 connections to list reads, 2 to everything else), SQLite reads the events list on
// reader threads (2 here). With that share taken by one organization's slow searches, and more
// queued behind them (on PostgreSQL as many as the whole pool has connections), another
// organization's session routing and a get by id (each authenticated) are answered before any of
// those searches: they never queue behind list reads.
// Only outcomes and order are asserted: each slow search takes seconds, the others milliseconds.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createDb, splitPoolSize, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { eventReadersFor } from '../src/runtime/event-readers.js';
import type { EventReaders } from '../src/runtime/event-readers.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { insertSlowSearchEvents, slowSearchPath } from './support/slow-search.js';
import { freshDatabaseUrl, withAdmin } from './support/test-database.js';

let databaseUrl: string;
let db: Db;
let eventReaders: EventReaders | undefined;
let server: LiveServer;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
/** List reads the SQLite reader threads were handed. */
let handedToReaders = 0;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  const setup = createDb(databaseUrl);
  await migrateDb(setup);
  acme = await createTenant(setup, 'Acme');
  globex = await createTenant(setup, 'Globex');
  fx = await loadRoutingFixture(setup, globex.organizationId);
  await insertSlowSearchEvents(setup, acme.organizationId);
  await setup.close();

  db = createDb(databaseUrl, { poolSize: 4 });
  eventReaders = eventReadersFor(db, databaseUrl, 2);
  if (eventReaders) {
    const readers = eventReaders;
    const listEvents = readers.listEvents.bind(readers);
    readers.listEvents = (job) => {
      handedToReaders += 1;
      return listEvents(job);
    };
  }
  server = await startLiveServer(createApp({ db, ...(eventReaders ? { eventReaders } : {}) }));
}, 60_000);

afterAll(async () => {
  await server?.close();
  await eventReaders?.close();
  await db?.close();
});

async function call<T>(key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { 'Service-API-Key': key, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** PostgreSQL: statements running on this database's list connections. */
async function runningListStatements(): Promise<number> {
  const url = new URL(databaseUrl);
  const database = url.pathname.slice(1);
  const { rows } = await withAdmin(databaseUrl, (admin) =>
    admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = $1 AND application_name = 'agentline lists' AND state = 'active'`,
      [database],
    ),
  );
  return rows[0]!.n;
}

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

describe("list reads' own share of the database", () => {
  it('answers session routing and a get by id while slow searches hold every list connection', async () => {
    const draft = await call<Schemas['Experiment']>(
      globex.key,
      'POST',
      '/api/v1/experiments/',
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    );
    expect(draft.status).toBe(200);

    const settled: string[] = [];
    const count = db.kind === 'postgres' ? 5 : 3;
    const searches = Array.from({ length: count }, (_, i) =>
      call<Schemas['EventListResponse']>(acme.key, 'GET', slowSearchPath()).then((answer) => {
        settled.push(`search ${i}`);
        return answer;
      }),
    );
    if (db.kind === 'postgres') {
      await until(async () => (await runningListStatements()) === 2, 'both list connections run');
    } else {
      await until(() => handedToReaders === count, 'the reader threads have every search');
    }

    const routed = await call<Schemas['RoutedSession']>(
      globex.key,
      'POST',
      `/api/v1/channels/targets/${fx.targets.main}/sessions`,
      { user_id: 'caller' },
    );
    settled.push('routing');
    const got = await call<Schemas['Experiment']>(
      globex.key,
      'GET',
      `/api/v1/experiments/${draft.body.id}`,
    );
    settled.push('get by id');
    expect(routed.status).toBe(200);
    expect(routed.body.target_id).toBe(fx.targets.main);
    expect(got.status).toBe(200);
    expect(got.body.name).toBe(draft.body.name);

    for (const search of await Promise.all(searches)) {
      expect(search.status).toBe(200);
      expect(search.body.total_count).toBe(0);
    }
    expect(settled.slice(0, 2)).toEqual(['routing', 'get by id']);
  }, 60_000);
});

describe('the split of DATABASE_POOL_SIZE', () => {
  it('gives list reads half, rounded down, and shares a single connection', () => {
    expect(splitPoolSize(10)).toEqual({ lists: 5, others: 5 });
    expect(splitPoolSize(3)).toEqual({ lists: 1, others: 2 });
    expect(splitPoolSize(2)).toEqual({ lists: 1, others: 1 });
    expect(splitPoolSize(1)).toBeNull();
  });
});
