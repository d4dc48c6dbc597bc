// A database that cannot take writes (a read-only file or database, a full disk) or cannot be
// reached answers 503 with a clear message and Retry-After, never a crash or a 500, and reads keep
// working where they can.

import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createDb } from '../src/db/engine/client.js';
import { createTestApi, type Schemas, type Tenant, type TestApi } from './support/harness.js';
import {
  experimentBody,
  createRoutingTestbed,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { directUrl, onPostgres, onSqlite, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeEach(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
  // Use the key once while writes still work, so its last-used time is fresh.
  await api.request('GET', '/api/v1/events/?limit=0', { key: acme.key });
});

afterEach(() => api.close());

const create = <T = Schemas['ErrorResponse']>() =>
  api.request<T>('POST', '/api/v1/experiments/', {
    key: acme.key,
    body: experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
  });

async function expectReadOnlyAnswers() {
  const res = await create();
  expect(res.status).toBe(503);
  expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
  expect(res.body.detail).toContain('the database is read-only');
  expect(res.headers.get('retry-after')).toBe('30');
  const routed = await api.request('POST', `/api/v1/channels/targets/${fx.targets.main}/sessions`, {
    key: acme.key,
    body: {},
  });
  expect(routed.status).toBe(503);
  expect((await api.request('GET', '/api/v1/experiments/', { key: acme.key })).status).toBe(200);
  // With the rate limit on, whose budget the database keeps: counted in the process instead.
  const limited = createApp({ db: api.db, rateLimitPerMinute: 600 });
  const read = await limited.request('/api/v1/experiments/', {
    headers: { 'Service-API-Key': acme.key },
  });
  expect(read.status).toBe(200);
  expect(read.headers.get('ratelimit')).toBe('"default";r=599;t=1');
}

describe.runIf(onSqlite)('a SQLite database that cannot take writes', () => {
  it('answers 503 SERVICE_UNAVAILABLE when it is read-only, and still serves reads', async () => {
    if (api.db.kind !== 'sqlite') throw new Error('expected SQLite');
    api.db.sqlite.pragma('query_only = ON');
    await expectReadOnlyAnswers();
  });

  it('answers 503 when the disk is full, and writes nothing half', async () => {
    if (api.db.kind !== 'sqlite') throw new Error('expected SQLite');
    const pages = Number(api.db.sqlite.pragma('page_count', { simple: true }));
    api.db.sqlite.pragma(`max_page_count = ${pages}`);
    let res = await create();
    for (let i = 0; i < 50 && res.status === 200; i += 1) res = await create();
    expect(res.status).toBe(503);
    expect(res.body.detail).toContain('the database disk is full');
    // Every experiment that was answered 200 is whole: it has both of its variants.
    const list = await api.request<Schemas['ExperimentListResponse']>(
      'GET',
      '/api/v1/experiments/?limit=1000',
      { key: acme.key },
    );
    for (const experiment of list.body.items) expect(experiment.variants).toHaveLength(2);
  });
});

describe.runIf(onPostgres)('a PostgreSQL database that cannot take writes or be reached', () => {
  it('answers 503 SERVICE_UNAVAILABLE when it is read-only, and still serves reads', async () => {
    if (api.db.kind !== 'postgres') throw new Error('expected PostgreSQL');
    // New sessions of this database start read-only (as on a hot standby, or after an operator's
    // ALTER): a server process that connects now can read but not write.
    const [{ name }] = (await queryTestDb<{ name: string }>(
      api.db,
      sql`SELECT current_database() AS name`,
    )) as [{ name: string }];
    await queryTestDb(
      api.db,
      sql.raw(`ALTER DATABASE "${name}" SET default_transaction_read_only = on`),
    );
    // On PostgreSQL itself: PgBouncer would hand the new process its kept server connections,
    // whose sessions began before the ALTER.
    const url = directUrl(api.db.pool.options.connectionString!);
    await api.close();
    api = await createTestApi(createDb(url));
    await expectReadOnlyAnswers();
  });

  it('answers 503 while the database server cannot be reached', async () => {
    const unreachable = await createTestApi(
      createDb('postgres://agentline:agentline@127.0.0.1:1/agentline'),
    );
    try {
      const res = await unreachable.request<Schemas['ErrorResponse']>(
        'GET',
        '/api/v1/experiments/',
        { key: acme.key },
      );
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.body.detail).toContain('cannot be reached');
      // /readyz is operational, outside the API's spec: asked of the app directly.
      expect((await unreachable.app.request('/readyz')).status).toBe(503);
    } finally {
      await unreachable.close();
    }
  });
});
