// Bytes that are not UTF-8, in a request body or in the percent escapes of a query string, are a
// 422 naming where they are, never text with U+FFFD in their place, and nothing is stored.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import type { Db } from '../src/db/engine/client.js';
import { sessions } from '../src/db/schema/sqlite.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { sendRaw, startLiveServer, type LiveServer } from './support/live-server.js';
import { stringContaining } from './support/matchers.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';
import { createTestDb, queryTestDb } from './support/test-database.js';

let db: Db;
let app: App;
let server: LiveServer;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  db = await createTestDb();
  acme = await createTenant(db, 'Acme');
  fx = await loadRoutingFixture(db, acme.organizationId);
  app = createApp({ db });
  server = await startLiveServer(app);
});

afterAll(async () => {
  await server.close();
  await db.close();
});

const routePath = () => `/api/v1/channels/targets/${fx.targets.main}/sessions`;

/** A routing body whose user_id is `userId`, given as bytes. */
const routingBody = (userId: Buffer) =>
  Buffer.concat([Buffer.from('{"user_id": "'), userId, Buffer.from('"}')]);

function route(chunks: Buffer[], { chunked = false } = {}) {
  const length = chunks.reduce((n, chunk) => n + chunk.length, 0);
  return sendRaw<Schemas['HTTPValidationError'] & Schemas['RoutedSession']>(server.baseUrl, {
    path: routePath(),
    chunks,
    headers: {
      'Service-API-Key': acme.key,
      'Content-Type': 'application/json',
      ...(chunked ? {} : { 'Content-Length': String(length) }),
    },
  });
}

async function sessionCount(): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(db, sql`SELECT count(*) AS n FROM ${sessions}`);
  return Number(row!.n);
}

const notUtf8Body = {
  loc: ['body'],
  msg: stringContaining('not valid UTF-8'),
  type: 'value_error',
};

describe('bytes that are not UTF-8', () => {
  it('in a body are a 422, and nothing is stored', async () => {
    const before = await sessionCount();
    for (const bytes of [
      [0xff], // never in UTF-8
      [0x63, 0x61, 0x66, 0xc3], // a sequence cut short
      [0xc0, 0xaf], // an overlong "/"
      [0xed, 0xa0, 0x80], // an encoded surrogate
    ]) {
      const res = await route([routingBody(Buffer.from(bytes))]);
      expect(res.status, JSON.stringify(bytes)).toBe(422);
      expect(res.body.detail).toEqual([notUtf8Body]);
    }
    expect(await sessionCount()).toBe(before);
  });

  it('in a body sent in-process are a 422 too', async () => {
    const res = await app.request(routePath(), {
      method: 'POST',
      headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
      body: routingBody(Buffer.from([0xff])),
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: [notUtf8Body] });
  });

  it('is not said of a character split between two chunks of a body', async () => {
    const body = routingBody(Buffer.from('café ☕', 'utf8'));
    const split = body.indexOf(0xa9); // the second byte of "é"
    const res = await route([body.subarray(0, split), body.subarray(split)], { chunked: true });
    expect(res.status).toBe(200);
    expect(res.body.session_id).toMatch(/.+/);
  });

  it('in a percent-encoded query value or name are a 422 naming the parameter', async () => {
    const assignment = `/api/v1/channels/targets/${fx.targets.main}/assignment`;
    for (const [query, parameter] of [
      ['user_id=%FF', 'user_id'],
      ['user_id=caf%C3', 'user_id'],
      ['user_id=%ED%A0%80', 'user_id'],
      ['user_id=u&%FF=1', '%FF'],
    ]) {
      const res = await sendRaw<Schemas['HTTPValidationError']>(server.baseUrl, {
        method: 'GET',
        path: `${assignment}?${query}`,
        headers: { 'Service-API-Key': acme.key },
      });
      expect(res.status, query).toBe(422);
      expect(res.body.detail).toEqual([
        { loc: ['query', parameter], msg: stringContaining('UTF-8'), type: 'value_error' },
      ]);
    }
    // UTF-8 escapes, a `+` and a `%` that starts no escape are text as usual.
    for (const query of ['user_id=caf%C3%A9', 'user_id=a+b', 'user_id=100%', 'user_id=%zz']) {
      const res = await sendRaw(server.baseUrl, {
        method: 'GET',
        path: `${assignment}?${query}`,
        headers: { 'Service-API-Key': acme.key },
      });
      expect(res.status, query).toBe(200);
    }
  });

  it('in a path parameter are a 422 naming it', async () => {
    const res = await sendRaw<Schemas['HTTPValidationError']>(server.baseUrl, {
      method: 'GET',
      path: '/api/v1/experiments/%FF',
      headers: { 'Service-API-Key': acme.key },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]!.loc).toEqual(['path', 'experiment_id']);
  });
});
