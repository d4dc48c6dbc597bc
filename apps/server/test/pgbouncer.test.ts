// Server processes behind PgBouncer in transaction pooling mode (scripts/pgbouncer-setup.sh), as
// managed PostgreSQL services run it: each transaction, or statement outside one, may go to
// another server connection, which served another client's just before. Nothing the server keeps
// on a connection between transactions (a named prepared statement, a session advisory lock) may
// be relied on there. Skipped, with a note from vitest.config.ts, when no PgBouncer answers.

import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { openEventStream } from './support/event-stream.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import {
  freshDatabaseUrl,
  insertTestEvents,
  onPostgres,
  PGBOUNCER_URL,
  postgresUrlOf,
  queryTestDb,
  runDatabasePrefix,
  throughPgbouncer,
  withAdmin,
} from './support/test-database.js';

describe.runIf(onPostgres && PGBOUNCER_URL)('behind PgBouncer in transaction mode', () => {
  let db: Db;
  let acme: Tenant;
  let fx: RoutingFixture;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    // Arranged and inspected directly; served through PgBouncer only.
    const databaseUrl = await freshDatabaseUrl();
    db = createDb(databaseUrl);
    acme = await createTenant(db, 'Acme');
    fx = await loadRoutingFixture(db, acme.organizationId);
    const env = {
      DATABASE_URL: throughPgbouncer(databaseUrl),
      DATABASE_PREPARED_STATEMENTS: 'false',
    };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.close();
  });

  async function call<T>(server: ServerProcess, method: string, path: string, body?: unknown) {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
      method,
      headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  }

  const route = (server: ServerProcess, targetId: number, userId: string) =>
    call<Schemas['RoutedSession']>(server, 'POST', `/channels/targets/${targetId}/sessions`, {
      user_id: userId,
    });

  /** `n` requests at once, the i-th through a or b in turn. */
  const atOnce = <T>(n: number, send: (server: ServerProcess, i: number) => Promise<T>) =>
    Promise.all(Array.from({ length: n }, (_, i) => send(i % 2 === 0 ? a : b, i)));

  it('lists events, many at once and again', async () => {
    await insertTestEvents(
      db,
      Array.from({ length: 30 }, (_, i) => ({
        organizationId: acme.organizationId,
        timestamp: '2026-06-01T00:00:00.000Z',
        type: `listed-${i}`,
      })),
    );
    for (let round = 0; round < 3; round += 1) {
      const lists = await atOnce(20, (server) =>
        call<Schemas['EventListResponse']>(server, 'GET', '/events/?limit=10'),
      );
      for (const list of lists) {
        expect(list.status, JSON.stringify(list.body)).toBe(200);
        expect(list.body.items).toHaveLength(10);
      }
    }
  });

  it('routes 10 sessions at once, round after round', async () => {
    for (let round = 0; round < 3; round += 1) {
      const routed = await atOnce(10, (server, i) =>
        route(server, fx.targets.second, `user-${round}-${i}`),
      );
      for (const res of routed) expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
  });

  it('starts exactly one of 10 drafts started at once on one target', async () => {
    const drafts = await atOnce(10, (server, i) =>
      call<Schemas['Experiment']>(
        server,
        'POST',
        '/experiments/',
        experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned], {
          name: `draft ${i}`,
        }),
      ),
    );
    const starts = await atOnce(10, (server, i) =>
      call(server, 'POST', `/experiments/${drafts[i]!.body.id}/start`),
    );
    const statuses = starts.map((start) => start.status).sort();
    expect(statuses, JSON.stringify(starts)).toEqual([200, ...Array<number>(9).fill(409)]);
    const started = drafts[starts.findIndex((start) => start.status === 200)]!.body.id;
    expect((await call(a, 'POST', `/experiments/${started}/stop`)).status).toBe(200);
  });

  it('counts exactly max_sessions sessions routed by 8 connections through both', async () => {
    const maxSessions = 30;
    const created = await call<Schemas['Experiment']>(
      a,
      'POST',
      '/experiments/',
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned], {
        name: 'capped',
        max_sessions: maxSessions,
      }),
    );
    const id = created.body.id;
    expect((await call(b, 'POST', `/experiments/${id}/start`)).status).toBe(200);
    // More sessions than the cap, each connection routing one after another.
    const answers = (
      await atOnce(8, async (server, c) => {
        const experiments: Array<number | null> = [];
        for (let i = 0; i < 8; i += 1) {
          const res = await route(server, fx.targets.main, `capped-${c}-${i}`);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          experiments.push(res.body.experiment_id);
        }
        return experiments;
      })
    ).flat();
    expect(answers.filter((experiment) => experiment === id)).toHaveLength(maxSessions);
    const [stored] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM sessions WHERE experiment_id = ${id}`,
    );
    expect(stored!.n).toBe(maxSessions);
    const record = await call<Schemas['Experiment']>(a, 'GET', `/experiments/${id}`);
    expect(record.body).toMatchObject({ status: 'stopped', ended_reason: 'max_sessions' });
  }, 60_000);

  it('streams the events sessions routed through the other process write', async () => {
    const stream = await openEventStream(a.baseUrl, {
      key: acme.key,
      query: 'type=session-started',
    });
    expect(stream.status).toBe(200);
    const routed = await Promise.all(
      Array.from({ length: 5 }, (_, i) => route(b, fx.targets.second, `streamed-${i}`)),
    );
    const received = await stream.waitFor(5, 10_000);
    expect(received.map((event) => event.data.session_id).sort()).toEqual(
      routed.map((res) => res.body.session_id).sort(),
    );
    stream.close();
  });
});

describe.runIf(onPostgres && PGBOUNCER_URL)('migrations behind PgBouncer', () => {
  it('are applied once when two processes start on a new database at once', async () => {
    const adminUrl = process.env.AGENTLINE_TEST_POSTGRES_URL!;
    const name = `${runDatabasePrefix(process.env.AGENTLINE_TEST_RUN!)}pgbouncer_${process.pid}`;
    await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
    const databaseUrl = postgresUrlOf(adminUrl, name);
    const env = {
      DATABASE_URL: throughPgbouncer(databaseUrl),
      DATABASE_PREPARED_STATEMENTS: 'false',
    };
    const servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    await Promise.all(servers.map((server) => server.stop()));
    const journal = JSON.parse(
      readFileSync(new URL('../drizzle/postgres/meta/_journal.json', import.meta.url), 'utf8'),
    ) as { entries: unknown[] };
    const db = createDb(databaseUrl);
    try {
      const [applied] = await queryTestDb<{ n: number; distinct: number }>(
        db,
        sql`SELECT count(*) AS n, count(DISTINCT hash) AS "distinct" FROM drizzle.__drizzle_migrations`,
      );
      expect(applied).toEqual({ n: journal.entries.length, distinct: journal.entries.length });
    } finally {
      await db.close();
    }
  }, 60_000);
});
