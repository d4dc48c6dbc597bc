// How many of one key's list reads run at once (http/admission.ts), and PostgreSQL's list
// reads in one backend each (db/engine/portable-sql.ts): what keeps one organization's slow
// searches from taking every database core from the others (`pnpm bench tenants`
// measures the effect).

import { sql } from 'drizzle-orm';
import { Hono } from 'hono';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDb } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { runListRead, selectRows } from '../src/db/engine/portable-sql.js';
import type { AppEnv, AuthContext } from '../src/http/app-env.js';
import { Admission, isListRead } from '../src/http/admission.js';
import { routes } from '../src/generated/routes.js';
import { createTenant, createTestApi, type TestApi } from './support/harness.js';
import { sendRaw, startLiveServer, type LiveServer } from './support/live-server.js';
import { insertSlowSearchEvents, slowSearchPath } from './support/slow-search.js';
import { freshDatabaseUrl, onPostgres } from './support/test-database.js';

describe('which operations are list reads', () => {
  it('is every paged list of the spec (the operations that take a cursor), and nothing else', () => {
    const listReads = Object.values(routes)
      .map((route) => route.operationId)
      .filter(isListRead)
      .sort();
    expect(listReads).toEqual([
      'agents_list',
      'channel_targets_list',
      'channels_telephony_numbers_a2p_status',
      'events_list',
      'experiments_history',
      'experiments_list',
      'prompts_list',
      'webhooks_endpoints_deliveries',
      'webhooks_endpoints_list',
    ]);
  });

  it('lets a key run 2 list reads at once unless told otherwise; 0 turns the turns off', () => {
    expect(loadConfig({}).concurrentListReadsPerKey).toBe(2);
    expect(loadConfig({ CONCURRENT_LIST_READS_PER_KEY: '0' }).concurrentListReadsPerKey).toBe(0);
    expect(() => loadConfig({ CONCURRENT_LIST_READS_PER_KEY: 'two' })).toThrow(
      /^CONCURRENT_LIST_READS_PER_KEY must be a whole number/,
    );
  });
});

/** List reads take turns, other requests have no cap: what the tests below look at. */
const listReadTurns = (listReadsPerKey: number) =>
  new Admission({
    requestsPerKey: 0,
    listReadsPerKey,
    queuedPerKey: 256,
    queueWaitMs: 10_000,
  }).middleware();

describe('list read turns per key', () => {
  /** Each request's handler says it has entered, and answers once the test opens its gate. */
  const gates = new Map<string, { enter(): void; opened: Promise<void> }>();
  const entered: string[] = [];
  const app = new Hono<AppEnv>();
  // What authentication and authorize set, from the request, so that the test chooses them.
  app.use(async (c, next) => {
    c.set('auth', { keyId: c.req.query('key')! } as AuthContext);
    c.set('operationId', c.req.query('operation')!);
    await next();
  });
  app.use(listReadTurns(2));
  app.get('/', async (c) => {
    const name = c.req.query('name')!;
    entered.push(name);
    gates.get(name)!.enter();
    await gates.get(name)!.opened;
    return c.text(name);
  });

  function send(name: string, key: string, operation = 'events_list') {
    let enter!: () => void;
    let open!: () => void;
    const gate = {
      entered: new Promise<void>((resolve) => (enter = resolve)),
      opened: new Promise<void>((resolve) => (open = resolve)),
      enter: () => enter(),
      open: () => open(),
    };
    gates.set(name, gate);
    const answer = Promise.resolve(
      app.request(`/?name=${name}&key=${key}&operation=${operation}`),
    ).then((response) => response.text());
    return { ...gate, answer };
  }

  /** Lets pending promise callbacks run, so that a request that could enter has entered. */
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it("runs a key's third list read only when one of its first two ends, in arrival order", async () => {
    entered.length = 0;
    const first = send('first', 'k1');
    const second = send('second', 'k1');
    const third = send('third', 'k1');
    const fourth = send('fourth', 'k1', 'prompts_list');
    await Promise.all([first.entered, second.entered]);
    await settle();
    expect(entered).toEqual(['first', 'second']);

    // Another key's list read, and this key's request of another kind, do not wait.
    const otherKey = send('other key', 'k2');
    const notAList = send('not a list', 'k1', 'experiments_get');
    await Promise.all([otherKey.entered, notAList.entered]);
    expect(entered.slice(2).sort()).toEqual(['not a list', 'other key']);

    second.open();
    expect(await second.answer).toBe('second');
    await third.entered;
    await settle();
    expect(entered.at(-1)).toBe('third');
    expect(entered).not.toContain('fourth');

    first.open();
    await fourth.entered;
    for (const request of [third, fourth, otherKey, notAList]) request.open();
    expect(await Promise.all([first, third, fourth].map((r) => r.answer))).toEqual([
      'first',
      'third',
      'fourth',
    ]);
  });

  it('gives the turn back when the handler fails', async () => {
    const failing = new Hono<AppEnv>();
    failing.use(async (c, next) => {
      c.set('auth', { keyId: 'k3' } as AuthContext);
      c.set('operationId', 'agents_list');
      await next();
    });
    failing.use(listReadTurns(1));
    failing.get('/', () => {
      throw new Error('the read failed');
    });
    failing.onError((error, c) => c.text(error.message, 500));
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const response = await failing.request('/');
      expect(await response.text()).toBe('the read failed');
    }
  });
});

describe.runIf(onPostgres)('list reads on PostgreSQL', () => {
  let api: TestApi;
  let server: LiveServer;
  let locker: pg.Client;

  beforeAll(async () => {
    const url = await freshDatabaseUrl();
    const db = createDb(url);
    await migrateDb(db);
    api = await createTestApi(db);
    server = await startLiveServer(createApp({ db, concurrentListReadsPerKey: 2 }));
    locker = new pg.Client({ connectionString: url });
    await locker.connect();
  });

  afterAll(async () => {
    await locker?.end();
    await server?.close();
    await api?.close();
  });

  it('run in one backend each: no parallel workers, only inside the list read', async () => {
    const setting = sql`SELECT current_setting('max_parallel_workers_per_gather') AS workers`;
    const inside = await runListRead(api.db, function* () {
      return yield* selectRows<{ workers: string }>(setting);
    });
    expect(inside).toEqual([{ workers: '0' }]);
    if (api.db.kind !== 'postgres') throw new Error('PostgreSQL expected');
    const outside = await api.db.listPool.query(
      "SELECT current_setting('max_parallel_workers_per_gather') AS workers",
    );
    expect(outside.rows).toEqual([{ workers: '2' }]);
  });

  it("keeps a key's third list read out of the database while two of its reads are in it", async () => {
    const acme = await createTenant(api.db, 'Acme');
    // Each search takes a large part of a second, so that the three overlap.
    await insertSlowSearchEvents(api.db, acme.organizationId, 1200);
    const activeListReads = async () => {
      const { rows } = await locker.query<{ count: string }>(
        `SELECT count(*) FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active'
            AND application_name = 'agentline lists'`,
      );
      return Number(rows[0]!.count);
    };
    const search = () =>
      sendRaw(server.baseUrl, {
        method: 'GET',
        path: slowSearchPath(),
        headers: { 'Service-API-Key': acme.key },
      });
    let done = false;
    const answers = Promise.all([search(), search(), search()]).finally(() => (done = true));
    const seen = new Set<number>();
    while (!done) {
      seen.add(await activeListReads());
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect((await answers).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(Math.max(...seen)).toBe(2);
  });
});
