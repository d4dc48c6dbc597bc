// What must hold across server processes, through real HTTP servers on the project's backend
// (one SQLite file, or one PostgreSQL database): concurrent starts on one target leave exactly one
// running experiment, in one process and through two; sessions routed through two processes are
// all counted in the results; sticky assignment agrees across processes.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { experiments } from '../src/db/schema/sqlite.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, onSqlite, queryTestDb } from './support/test-database.js';

let databaseUrl: string;
let db: Db;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  fx = await loadRoutingFixture(db, acme.organizationId);
});

afterAll(async () => {
  await db.close();
  // A PostgreSQL test database is dropped by the project's global teardown.
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

/** `T` is the body expected at the status the test asserts. */
async function post<T = unknown>(baseUrl: string, path: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** The answer to a start: the started experiment (200) or the refusal (409). */
type StartOrRefusal = Partial<Schemas['ExperimentStartResponse'] & Schemas['ErrorResponse']>;

async function createDrafts(baseUrl: string, targetId: number, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const res = await post<Schemas['Experiment']>(
      baseUrl,
      '/api/v1/experiments/',
      experimentBody(targetId, [fx.agents.pinned, fx.agents.alsoPinned], { name: `draft ${i}` }),
    );
    expect(res.status).toBe(200);
    ids.push(res.body.id);
  }
  return ids;
}

async function runningOn(targetId: number): Promise<number[]> {
  const rows = await queryTestDb<{ id: number }>(
    db,
    sql`SELECT id FROM ${experiments} WHERE ${experiments.targetId} = ${targetId} AND ${experiments.status} = 'running'`,
  );
  return rows.map((row) => row.id);
}

/** Starts every draft at once, the i-th through `baseUrls[i % n]`; checks one won; its id. */
async function startAllAtOnce(baseUrls: string[], targetId: number): Promise<number> {
  const ids = await createDrafts(baseUrls[0]!, targetId, 20);
  const results = await Promise.all(
    ids.map((id, i) =>
      post<StartOrRefusal>(baseUrls[i % baseUrls.length]!, `/api/v1/experiments/${id}/start`),
    ),
  );
  const statuses = results.map((r) => r.status);
  const answers = JSON.stringify(results.map((r) => [r.status, r.body.detail]));
  expect(
    statuses.filter((s) => s === 200),
    answers,
  ).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(results.length - 1);
  const winner = results.find((r) => r.status === 200)!.body.experiment!.id;
  for (const loser of results.filter((r) => r.status === 409)) {
    expect(loser.body.detail).toContain(`Experiment ${winner} ("`);
  }
  expect(await runningOn(targetId)).toEqual([winner]);
  return winner;
}

describe('one server process', () => {
  let server: LiveServer;
  beforeAll(async () => {
    server = await startLiveServer(createApp({ db }));
  });
  afterAll(() => server.close());

  it('starts exactly one of 20 drafts started at once on one target', async () => {
    const winner = await startAllAtOnce([server.baseUrl], fx.targets.main);
    expect((await post(server.baseUrl, `/api/v1/experiments/${winner}/stop`)).status).toBe(200);
  });
});

describe('two server processes on one database', () => {
  let a: ServerProcess;
  let b: ServerProcess;
  beforeAll(async () => {
    const env = { DATABASE_URL: databaseUrl };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
  });

  it('starts exactly one of 20 drafts started at once through both', async () => {
    const winner = await startAllAtOnce([a.baseUrl, b.baseUrl], fx.targets.second);
    expect((await post(b.baseUrl, `/api/v1/experiments/${winner}/stop`)).status).toBe(200);
  }, 60_000);

  it('counts every session routed through either, and gives a user one variant in both', async () => {
    const [draft] = await createDrafts(a.baseUrl, fx.targets.second, 1);
    expect((await post(b.baseUrl, `/api/v1/experiments/${draft}/start`)).status).toBe(200);

    // 100 users, each routed twice through A and twice through B, all at once.
    const requests = Array.from({ length: 400 }, (_, i) => ({
      server: i % 4 < 2 ? a : b,
      user: `user-${Math.floor(i / 4)}`,
    }));
    const routed = await Promise.all(
      requests.map(({ server, user }) =>
        post<Schemas['RoutedSession']>(
          server.baseUrl,
          `/api/v1/channels/targets/${fx.targets.second}/sessions`,
          { user_id: user },
        ),
      ),
    );
    const routedByVariant = new Map<number | null, number>();
    const variantsOfUser = new Map<string, Set<number | null>>();
    routed.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(res.body.experiment_id).toBe(draft);
      const variant = res.body.variant_id;
      routedByVariant.set(variant, (routedByVariant.get(variant) ?? 0) + 1);
      const user = requests[i]!.user;
      variantsOfUser.set(user, (variantsOfUser.get(user) ?? new Set()).add(variant));
    });
    expect(variantsOfUser.size).toBe(100);
    for (const variants of variantsOfUser.values()) expect(variants.size).toBe(1);
    // 100 users on a 70/30 split: both variants are all but certain to have some.
    expect(routedByVariant.size).toBe(2);

    for (const server of [a, b]) {
      const results = await fetch(`${server.baseUrl}/api/v1/experiments/${draft}/results`, {
        headers: { 'Service-API-Key': acme.key },
      }).then((r) => r.json() as Promise<Schemas['ExperimentResults']>);
      for (const variant of results.variants) {
        expect(variant.session_count).toBe(routedByVariant.get(variant.variant_id) ?? 0);
      }
      expect(results.variants.reduce((sum, v) => sum + v.session_count, 0)).toBe(400);
    }
    expect((await post(a.baseUrl, `/api/v1/experiments/${draft}/stop`)).status).toBe(200);
  }, 60_000);

  it('counts exactly max_sessions sessions routed by 16 connections through both', async () => {
    const maxSessions = 500;
    const created = await post<Schemas['Experiment']>(
      a.baseUrl,
      '/api/v1/experiments/',
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned], {
        name: 'capped',
        max_sessions: maxSessions,
      }),
    );
    const id = created.body.id;
    expect((await post(b.baseUrl, `/api/v1/experiments/${id}/start`)).status).toBe(200);

    // 16 connections, 8 through each process, each routing one session after another: more
    // sessions in all than the cap, so the last allowed one races with many more.
    const perConnection = 40;
    const connections = Array.from({ length: 16 }, (_, c) => async () => {
      const server = c % 2 === 0 ? a : b;
      const answers: Array<number | null> = [];
      for (let i = 0; i < perConnection; i += 1) {
        const res = await post<Schemas['RoutedSession']>(
          server.baseUrl,
          `/api/v1/channels/targets/${fx.targets.main}/sessions`,
          { user_id: `capped-${c}-${i}` },
        );
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        answers.push(res.body.experiment_id);
      }
      return answers;
    });
    const answers = (await Promise.all(connections.map((run) => run()))).flat();
    expect(answers).toHaveLength(16 * perConnection);
    expect(answers.filter((experiment) => experiment === id)).toHaveLength(maxSessions);

    const [stored] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM sessions WHERE experiment_id = ${id}`,
    );
    expect(Number(stored!.n)).toBe(maxSessions);
    const record = await fetch(`${a.baseUrl}/api/v1/experiments/${id}`, {
      headers: { 'Service-API-Key': acme.key },
    }).then((r) => r.json() as Promise<Schemas['Experiment']>);
    expect(record).toMatchObject({ status: 'stopped', ended_reason: 'max_sessions' });
    // Stopped at the moment of the last counted session.
    const [last] = await queryTestDb<{ at: string }>(
      db,
      sql`SELECT max(created_at) AS at FROM sessions WHERE experiment_id = ${id}`,
    );
    expect(record.stopped_at).toBe(last!.at);
  }, 120_000);
});
