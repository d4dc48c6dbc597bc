// The list query timeout: a list read that runs past it is stopped and answered with a 422
// query_timeout saying how to narrow the query, never a 500, and what served it (a pooled
// PostgreSQL connection, a SQLite reader thread) serves the next request as before.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { isQueryTimeout } from '../src/db/engine/errors.js';
import { eventReadersFor } from '../src/runtime/event-readers.js';
import { runListRead, selectRows } from '../src/db/engine/portable-sql.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { insertSlowSearchEvents, slowSearchPath } from './support/slow-search.js';
import { freshDatabaseUrl, onPostgres, onSqlite } from './support/test-database.js';

const TIMEOUT_MS = 250;

async function openDb(options: Parameters<typeof createDb>[1]): Promise<Db> {
  const db = createDb(await freshDatabaseUrl(), options);
  await migrateDb(db);
  return db;
}

function expectQueryTimeout(response: { status: number; body: unknown }): void {
  expect(response.status).toBe(422);
  const { detail = [] } = response.body as Schemas['HTTPValidationError'];
  expect(detail).toHaveLength(1);
  const [problem] = detail;
  expect(problem).toMatchObject({ loc: ['query'], type: 'query_timeout' });
  expect(problem?.msg).toContain(`took longer than ${TIMEOUT_MS} ms`);
  expect(problem?.msg).toMatch(/session_id.*time window.*fewer and longer search values/);
}

describe.runIf(onPostgres)('the list query timeout on PostgreSQL', () => {
  let api: TestApi;
  let acme: Tenant;

  beforeAll(async () => {
    // One connection for everything: the request after a cancelled list read gets the very
    // connection it ran on.
    api = await createTestApi(await openDb({ poolSize: 1, listQueryTimeoutMs: TIMEOUT_MS }));
    acme = await createTenant(api.db, 'Acme');
    await insertSlowSearchEvents(api.db, acme.organizationId);
  }, 60_000);

  afterAll(() => api?.close());

  it('answers a list read past the timeout with 422 query_timeout, and the connection serves on', async () => {
    expectQueryTimeout(await api.request('GET', slowSearchPath(), { key: acme.key }));
    const db = api.db;
    if (db.kind !== 'postgres') throw new Error('PostgreSQL expected');
    expect(db.listPool).toBe(db.pool);
    // The cancelled statement's SET LOCAL went with its transaction: nothing else is timed out.
    expect((await db.pool.query('SHOW statement_timeout')).rows).toEqual([
      { statement_timeout: '0' },
    ]);
    const page = await api.request<Schemas['EventListResponse']>(
      'GET',
      '/api/v1/events/?limit=2&search_fields=session_id&search_field_values=slow-7',
      { key: acme.key },
    );
    expect(page.status).toBe(200);
    expect(page.body.total_count).toBe(1);
    expect((await api.request('GET', '/api/v1/experiments/1', { key: acme.key })).status).toBe(404);
    // And the next slow one is stopped again.
    expectQueryTimeout(await api.request('GET', slowSearchPath(), { key: acme.key }));
  });

  it("bounds the list read's statements together, not only each one", async () => {
    const db = await openDb({ poolSize: 2, listQueryTimeoutMs: 1000 });
    try {
      // Each statement alone stays within the timeout; the two together do not.
      const read = runListRead(db, function* () {
        yield* selectRows(sql`SELECT pg_sleep(0.6)`);
        yield* selectRows(sql`SELECT pg_sleep(0.6)`);
        return 'finished';
      });
      const error = await read.then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(isQueryTimeout(error)).toBe(true);
      // A fast read on the same list connection is not held to what is left of another's time.
      const fast = await runListRead(db, () => selectRows<{ n: number }>(sql`SELECT 1 AS n`));
      expect(fast).toEqual([{ n: 1 }]);
    } finally {
      await db.close();
    }
  });
});

describe.runIf(onSqlite)('the list query timeout on SQLite reader threads', () => {
  let api: TestApi;
  let acme: Tenant;

  beforeAll(async () => {
    const url = await freshDatabaseUrl();
    const setup = createDb(url);
    await migrateDb(setup);
    const tenant = await createTenant(setup, 'Acme');
    await insertSlowSearchEvents(setup, tenant.organizationId);
    await setup.close();
    acme = tenant;
    const db = createDb(url, { listQueryTimeoutMs: TIMEOUT_MS });
    api = await createTestApi(db, { eventReaders: eventReadersFor(db, url, 1) });
  }, 60_000);

  afterAll(() => api?.close());

  it('answers a read past the timeout with 422 query_timeout, and a new thread serves on', async () => {
    expectQueryTimeout(await api.request('GET', slowSearchPath(), { key: acme.key }));
    // The one thread was given up; its replacement answers.
    const page = await api.request<Schemas['EventListResponse']>(
      'GET',
      '/api/v1/events/?limit=2&search_fields=session_id&search_field_values=slow-7',
      { key: acme.key },
    );
    expect(page.status).toBe(200);
    expect(page.body.total_count).toBe(1);
    expectQueryTimeout(await api.request('GET', slowSearchPath(), { key: acme.key }));
    expect((await api.request('GET', '/api/v1/events/?limit=0', { key: acme.key })).status).toBe(
      200,
    );
  });
});
