// Signed list cursors, on both backends, for every list operation:
// - forged cursors are a 422 at ["query", "cursor"], never a 500 and never a page at a position
//   the client chose: the unkeyed SHA-256 construction of the cursors before they were signed (with any value,
//   huge ids, 3e9, 2^53 - 1), altered seals, seals naming secrets that do not exist;
// - a cursor sealed with the real secret (a leaked one) whose position does not fit the ordered
//   property (types, 32-bit ranges, null where the property is never null, ids) is a 422 too;
// - a genuine walk over every page, in every order, gives the single page's items;
// - the secret is stored once per database however many processes start at once, and a rotation
//   (`agentline cursor-secret rotate`) is picked up by every app on the database without a
//   restart, keeps walks alive for the next page, and a second rotation retires the oldest secret.

import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDb } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { cursorSigner, SEALING_REFRESH_MS } from '../src/runtime/cursor-signer.js';
import { ensureCursorSecret, readCursorSecrets } from '../src/db/repositories/cursor-secrets.js';
import { newServerSecret } from '../src/domain/server-secrets.js';
import { cursorSecrets, webhookEndpoints } from '../src/db/schema/sqlite.js';
import * as postgresSchema from '../src/db/schema/postgres.js';
import type { AgentProperty } from '../src/vocabulary/directory.js';
import { everyValueOf } from '../src/vocabulary/spec-enums.js';
import {
  CURSOR_TEXT_CODE_POINTS,
  type CursorSigner,
  type NullableKeys,
} from '../src/domain/list-query.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import { afterConcurrentInserts } from './support/concurrent-secret-inserts.js';
import { ACME_RECORDS, loadRecords } from './fixtures/prompts-records.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import {
  CURSOR_LISTS,
  misfitPositions,
  orderQuery,
  sealedCursor,
  sealedPayload,
  unkeyedCursor,
  walkOf,
  type Order,
} from './support/forged-cursors.js';
import { stringMatching } from './support/matchers.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';

type Page =
  | Schemas['EventListResponse']
  | Schemas['PromptListResponse']
  | Schemas['WebhookEndpointListResponse'];
type Problem = Schemas['HTTPValidationError'];

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let signer: CursorSigner;

beforeAll(async () => {
  ({ api, acme, globex, fx } = await createRoutingTestbed());
  await loadRecords(api.db, acme.organizationId, ACME_RECORDS);
  await insertTestEvents(
    api.db,
    Array.from({ length: 11 }, (_, i) => ({
      organizationId: acme.organizationId,
      timestamp: `2026-03-0${1 + (i % 3)}T10:00:00.000Z`,
      sessionId: i % 4 === 0 ? null : `session-${i % 3}`,
      userId: i % 5 === 0 ? null : `user-${i % 2}`,
      category: ['call', 'llm', null][i % 3] ?? null,
      type: `type-${i % 2}`,
      description: i % 2 ? `event ${i}` : null,
      attributes: i % 3 ? { n: i % 2 } : null,
    })),
  );
  for (let i = 0; i < 5; i += 1) {
    const target = [fx.targets.main, fx.targets.second, fx.targets.orphan][i % 3]!;
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: {
        ...experimentBody(target, [fx.agents.pinned, fx.agents.flawed]),
        name: `Experiment ${i % 2}`,
        description: i % 2 ? null : `about ${i}`,
      },
    });
    expect(created.status).toBe(200);
    if (i === 0) {
      await api.request('POST', `/api/v1/experiments/${created.body.id}/start`, { key: acme.key });
    }
  }
  for (let i = 0; i < 5; i += 1) {
    const endpoint = await api.request('POST', '/api/v1/webhooks/endpoints', {
      key: acme.key,
      body: {
        url: `https://8.8.8.8/hook-${i % 2}`,
        description: i % 2 ? null : `endpoint ${i % 3}`,
        enabled: i % 3 !== 0,
        message_types: i % 2 ? ['event'] : ['experiment.status_changed', 'event'],
      },
    });
    expect(endpoint.status).toBe(200);
  }
  await queryTestDb(
    api.db,
    sql`UPDATE ${webhookEndpoints} SET disabled_reason = 'The receiver answered 410 Gone.'
        WHERE enabled = FALSE AND id = (SELECT min(id) FROM ${webhookEndpoints})`,
  );
  signer = await cursorSigner(api.db);
});

afterAll(() => api.close());

async function expectCursorProblem(url: string, message: RegExp, key = acme.key) {
  const res = await api.request<Problem>('GET', url, { key });
  expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(422);
  expect(res.body.detail).toEqual([
    { loc: ['query', 'cursor'], msg: stringMatching(message), type: 'value_error' },
  ]);
}

const withCursor = (path: string, order: Order, cursor: string) =>
  `${path}?${orderQuery(order)}&limit=2&cursor=${encodeURIComponent(cursor)}`;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const FORGED = /not a cursor this API gave out.*leave cursor out/;
const MISFIT = /does not mark a place in this list.*leave cursor out/;

describe.each(CURSOR_LISTS)('$path', ({ path, resource }) => {
  const orders: Order[] = Object.keys(resource.kinds).flatMap((property) => [
    { property, direction: 'asc' as const },
    { property, direction: 'desc' as const },
  ]);

  it('refuses cursors made with the unkeyed SHA-256 of the old construction, in every order', async () => {
    for (const order of orders) {
      const walk = walkOf(resource, acme.organizationId, order);
      const forged: Array<[unknown, unknown]> = [
        [null, 1],
        ['a', 3e9],
        [3e9, 3e9],
        [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
        [true, 1],
        [{ a: 1 }, 1],
        ...misfitPositions(resource, order.property).map(
          ([, value, id]) => [value, id] as [unknown, unknown],
        ),
      ];
      for (const [value, id] of forged) {
        await expectCursorProblem(withCursor(path, order, unkeyedCursor(walk, value, id)), FORGED);
      }
    }
  });

  it('refuses altered seals and seals naming secrets that do not exist', async () => {
    const order = resource.defaultOrder;
    const walk = walkOf(resource, acme.organizationId, order);
    const genuine = sealedCursor(signer, walk, null, 1);
    const [payload, id, mac] = genuine.split('.') as [string, string, string];
    const other = sealedCursor(signer, walk, null, 2).split('.')[2]!;
    for (const cursor of [
      `${payload}.${id}.${other}`,
      `${payload}.${id}.${mac.slice(0, 20)}${mac[20] === 'A' ? 'B' : 'A'}${mac.slice(21)}`,
      // The last character's two unused bits: the same HMAC, spelled otherwise.
      `${payload}.${id}.${mac.slice(0, -1)}${BASE64URL[BASE64URL.indexOf(mac[42]!) ^ 1]}`,
      `${payload}.${id}`,
      `${payload}.${mac}`,
      `${payload}.999.${mac}`,
      `${payload}.0.${mac}`,
      `${payload}.${'9'.repeat(40)}.${mac}`,
      `.${id}.${mac}`,
      `${payload}..${mac}`,
    ]) {
      await expectCursorProblem(withCursor(path, order, cursor), FORGED);
    }
  });

  it('refuses sealed cursors whose position does not fit the order, in every order', async () => {
    for (const order of orders) {
      const walk = walkOf(resource, acme.organizationId, order);
      for (const [what, value, id] of misfitPositions(resource, order.property)) {
        const cursor = sealedCursor(signer, walk, value, id);
        const res = await api.request<Problem>('GET', withCursor(path, order, cursor), {
          key: acme.key,
        });
        expect(res.status, `${path} ${orderQuery(order)}: ${what}`).toBe(422);
        expect(res.body.detail).toEqual([
          { loc: ['query', 'cursor'], msg: stringMatching(MISFIT), type: 'value_error' },
        ]);
      }
    }
  });

  it('takes a cut text only as long as a cursor cuts it to, in an order by a text', async () => {
    for (const order of orders) {
      const walk = walkOf(resource, acme.organizationId, order);
      const isText = ['text', 'exact', 'text_either', 'json'].includes(
        resource.kinds[order.property]!,
      );
      const cut = (value: unknown) =>
        withCursor(path, order, sealedPayload(signer, [walk, value, 1, true]));
      const res = await api.request('GET', cut('é'.repeat(CURSOR_TEXT_CODE_POINTS)), {
        key: acme.key,
      });
      expect(res.status, `${path} ${orderQuery(order)}`).toBe(isText ? 200 : 422);
      for (const value of ['é'.repeat(CURSOR_TEXT_CODE_POINTS - 1), null, 1]) {
        await expectCursorProblem(cut(value), MISFIT);
      }
    }
  });

  it('accepts sealed positions that fit, null only where the property may be null', async () => {
    for (const order of orders) {
      const walk = walkOf(resource, acme.organizationId, order);
      const res = await api.request<Page>(
        'GET',
        withCursor(path, order, sealedCursor(signer, walk, null, 1)),
        { key: acme.key },
      );
      expect(res.status, `${path} ${orderQuery(order)}`).toBe(
        resource.nullable.includes(order.property) ? 200 : 422,
      );
    }
  });

  it('refuses sealed payloads of another shape, and cursors of another walk', async () => {
    const order = resource.defaultOrder;
    const walk = walkOf(resource, acme.organizationId, order);
    for (const parts of [{}, [walk, 1], [walk, 1, 1, 1], 'text', null, [null, 1, 1]]) {
      const expected = Array.isArray(parts) && parts.length === 3 ? /another query/ : FORGED;
      await expectCursorProblem(withCursor(path, order, sealedPayload(signer, parts)), expected);
    }
    const notJson = Buffer.from('[not json').toString('base64url');
    await expectCursorProblem(
      withCursor(path, order, `${notJson}.${signer.seal(notJson)}`),
      FORGED,
    );
    const ofGlobex = sealedCursor(signer, walkOf(resource, globex.organizationId, order), 1, 1);
    await expectCursorProblem(withCursor(path, order, ofGlobex), /another query/);
    const reversed: Order = { ...order, direction: order.direction === 'asc' ? 'desc' : 'asc' };
    const ofReversed = sealedCursor(signer, walkOf(resource, acme.organizationId, reversed), 1, 1);
    await expectCursorProblem(withCursor(path, order, ofReversed), /another query/);
  });

  it('walks every page of every order with genuine cursors: no repeat, no skip', async () => {
    for (const order of orders) {
      const query = orderQuery(order);
      const whole = await api.request<Page>('GET', `${path}?${query}&limit=1000`, {
        key: acme.key,
      });
      expect(whole.body.items.length).toBeGreaterThan(2);
      const walked: unknown[] = [];
      let cursor: string | null = null;
      do {
        const after: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const res: { status: number; body: Page } = await api.request<Page>(
          'GET',
          `${path}?${query}&limit=2${after}`,
          { key: acme.key },
        );
        expect(res.status, `${path}?${query}${after}`).toBe(200);
        walked.push(...res.body.items);
        cursor = res.body.next_cursor ?? null;
      } while (cursor !== null && walked.length <= whole.body.items.length);
      expect(walked, `${path} ${query}`).toEqual(whole.body.items);
    }
  });
});

describe('what a cursor position may hold', () => {
  it('is held to the schemas: nullable to the spec, ids to the PostgreSQL id columns', () => {
    const agentsNullable = everyValueOf<NullableKeys<Schemas['Agent']> & AgentProperty>();
    agentsNullable(['prompt_id', 'pinned_prompt_version']);
    // @ts-expect-error: the spec's Agent never has a null name
    agentsNullable(['prompt_id', 'pinned_prompt_version', 'name']);
    // @ts-expect-error: pinned_prompt_version may be null in the spec
    agentsNullable(['prompt_id']);

    const tables = Object.values(postgresSchema)
      .filter((value: unknown): value is PgTable => value instanceof PgTable)
      .map((table) => getTableConfig(table));
    for (const { resource } of CURSOR_LISTS) {
      const table = tables.find((candidate) => candidate.name === resource.name);
      const id = table?.columns.find((column) => column.name === 'id');
      expect(id?.getSQLType(), resource.name).toBe(resource.ids);
    }
  });
});

describe('the cursor secret', () => {
  it('is stored once however many processes insert it at the same time', async () => {
    await afterConcurrentInserts(
      cursorSecrets,
      (db) => ensureCursorSecret(db, newServerSecret()),
      async (handles) => {
        const secrets = await readCursorSecrets(handles[0]!);
        expect(secrets.map((secret) => secret.id)).toEqual([1]);
        expect(secrets[0]!.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
        // Every handle seals alike.
        const seals = await Promise.all(
          handles.map(async (db) => (await cursorSigner(db)).seal('payload')),
        );
        expect(new Set(seals).size).toBe(1);
      },
    );
  });
});

describe('a rotation, across apps on one database', () => {
  let workspace: TempWorkspace;
  const apps: TestApi[] = [];
  let tenant: Tenant;
  /** A cursor sealed with a secret that a rotation has retired since. */
  let retiredCursor: string;

  /** A new app on the workspace's database: a server process that starts now. */
  async function startApp(): Promise<TestApi> {
    const db = createDb(workspace.databaseUrl);
    await migrateDb(db);
    const app = await createTestApi(db);
    apps.push(app);
    return app;
  }

  async function rotate(): Promise<string> {
    const result = await workspace.run(['cursor-secret', 'rotate']);
    expect(result.code, result.stderr).toBe(0);
    return result.stdout.trim();
  }

  async function page(app: TestApi, cursor: string | null) {
    const after = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    return app.request<Schemas['AgentListResponse']>(
      'GET',
      `/api/v1/agents/?order_by=name&limit=1${after}`,
      { key: tenant.key },
    );
  }

  /** The id of the secret that sealed a cursor (the seal is `<secret id>.<HMAC>`). */
  const secretOf = (cursor: string) => cursor.split('.')[1];

  beforeAll(async () => {
    workspace = await createWorkspace();
    const a = await startApp();
    tenant = await createTenant(a.db, 'Acme');
    await loadRecords(a.db, tenant.organizationId, ACME_RECORDS);
  });

  afterAll(async () => {
    vi.useRealTimers();
    for (const app of apps) await app.close();
    workspace.remove();
  });

  it('keeps walks alive for the next page, and every app picks the new secret up', async () => {
    const [a] = apps as [TestApi];
    const b = await startApp();
    const whole = await a.request<Schemas['AgentListResponse']>(
      'GET',
      '/api/v1/agents/?order_by=name&limit=100',
      { key: tenant.key },
    );
    expect(whole.body.items.length).toBeGreaterThan(5);

    // A walk over the whole list, its pages served by A and B in turn, rotated twice.
    const walked: unknown[] = [];
    const first = await page(a, null);
    walked.push(...first.body.items);
    const sealedByOne = first.body.next_cursor!;
    expect(secretOf(sealedByOne)).toBe('1');
    const second = await page(b, sealedByOne);
    walked.push(...second.body.items);

    expect(await rotate()).toBe('2');
    // B still seals with secret 1 (read under SEALING_REFRESH_MS ago), which still verifies.
    const third = await page(a, second.body.next_cursor!);
    expect(third.status).toBe(200);
    walked.push(...third.body.items);

    // An app started after the rotation seals with secret 2 ...
    const c = await startApp();
    const fourth = await page(c, third.body.next_cursor!);
    expect(fourth.status).toBe(200);
    walked.push(...fourth.body.items);
    const sealedByTwo = fourth.body.next_cursor!;
    expect(secretOf(sealedByTwo)).toBe('2');
    // ... and A, which holds secret 1 only, reads the secrets again when a cursor names a newer one.
    const fifth = await page(a, sealedByTwo);
    expect(fifth.status, JSON.stringify(fifth.body)).toBe(200);
    walked.push(...fifth.body.items);
    expect(secretOf(fifth.body.next_cursor!)).toBe('2');

    // The second rotation retires secret 1: an app that has read the secrets since refuses its
    // cursors, with a way out (the others do within SEALING_REFRESH_MS: the next test).
    expect(await rotate()).toBe('3');
    const d = await startApp();
    const refused = await page(d, sealedByOne);
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toMatch(/rotated out.*leave cursor out/);
    retiredCursor = sealedByOne;
    // Secret 2 still verifies: the walk goes on to its end, on any app.
    let cursor: string | null = fifth.body.next_cursor ?? null;
    for (const app of [d, a, b, c, d, a, b, c, d, a, b, c]) {
      if (cursor === null) break;
      const next = await page(app, cursor);
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      walked.push(...next.body.items);
      cursor = next.body.next_cursor ?? null;
    }
    expect(cursor).toBeNull();
    expect(walked).toEqual(whole.body.items);
  });

  it('has every app seal with the new secret once its secrets are older than the refresh time', async () => {
    const [a] = apps as [TestApi];
    const before = await page(a, null);
    expect(secretOf(before.body.next_cursor!)).not.toBe('4');
    expect(await rotate()).toBe('4');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + SEALING_REFRESH_MS + 1);
    try {
      for (const app of apps) {
        const after = await page(app, null);
        expect(secretOf(after.body.next_cursor!)).toBe('4');
        expect((await page(app, retiredCursor)).status).toBe(422);
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
