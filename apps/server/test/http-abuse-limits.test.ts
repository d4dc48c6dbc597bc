// Abuse limits: a per-key request budget (429 with Retry-After), budgets of failed
// authentications that never lock out a valid key, a cap on the query string, and a server that
// drops clients who trickle their request instead of waiting for them.

import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import type { Db } from '../src/db/engine/client.js';
import {
  addressBudgetName,
  canonicalAddress,
  clientAddress,
  TokenBuckets,
} from '../src/http/rate-limit.js';
import { FleetRateLimit } from '../src/http/fleet-rate-limit.js';
import { PERMISSIONS } from '../src/vocabulary/permissions.js';
import {
  createKey,
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { specValidator } from './support/contract.js';
import { startServerProcess } from './support/server-process.js';
import { createTestDb, onPostgres } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
});

afterAll(() => api.close());

describe('per-key rate limit', () => {
  it('answers 429 with Retry-After past the budget, per key', async () => {
    const app = createApp({ db: api.db, rateLimitPerMinute: 3 });
    // A key of its own: the budget is kept in the database, for every app on it.
    const key = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    const get = async (key: string) => {
      const res = await app.request('/api/v1/events/?limit=0', {
        headers: { 'Service-API-Key': key },
      });
      // A page of events (200) or the refusal (429).
      const body = (await res.json()) as Partial<Schemas['ErrorResponse']>;
      specValidator.validateResponse({
        method: 'GET',
        url: '/api/v1/events/',
        status: res.status,
        headers: res.headers,
        body,
      });
      return {
        status: res.status,
        body,
        retryAfter: res.headers.get('retry-after'),
        policy: res.headers.get('ratelimit-policy'),
        rateLimit: res.headers.get('ratelimit'),
      };
    };
    // Each answer says what is left (IETF RateLimit fields): 2, 1, 0, then the refusal.
    for (const remaining of [2, 1, 0]) {
      const answer = await get(key);
      expect(answer.status).toBe(200);
      expect(answer.policy).toBe('"default";q=3;w=60');
      expect(answer.rateLimit).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
    }
    const limited = await get(key);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect(limited.body.detail).toContain('more than 3 requests in a minute');
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(limited.policy).toBe('"default";q=3;w=60');
    // With nothing left, t is the wait Retry-After asks for (the draft: never earlier than t).
    expect(limited.rateLimit).toBe(`"default";r=0;t=${limited.retryAfter}`);
    // Another key has its own budget.
    const other = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    expect((await get(other)).status).toBe(200);
  });

  it('refills the budget over time', async () => {
    let now = 1_000_000;
    const limit = new FleetRateLimit(api.db, 60, () => now);
    const keyId = `refill-${Date.now()}`;
    for (let i = 0; i < 60; i += 1) expect((await limit.admit(keyId)).admitted).toBe(true);
    expect(await limit.admit(keyId)).toEqual({ admitted: false, waitSeconds: 1 });
    now += 1_000; // one more request's worth at 60 per minute
    expect(await limit.admit(keyId)).toMatchObject({ admitted: true, remaining: 0 });
    expect(await limit.admit(keyId)).toMatchObject({ admitted: false });
  });

  it('never tells more left than a minute’s budget less the request, a lease held besides a full bucket', async () => {
    let now = 1_000_000;
    const limit = new FleetRateLimit(api.db, 100_000, () => now);
    const keyId = `full-${Date.now()}`;
    expect(await limit.admit(keyId)).toMatchObject({ admitted: true, remaining: 99_999 });
    now += 60_000; // the bucket is full again, and this process still holds most of its lease
    expect(await limit.admit(keyId)).toMatchObject({ admitted: true, remaining: 99_999 });
  });

  it('says on error answers too what is left, but nothing to a key that failed', async () => {
    const app = createApp({ db: api.db, rateLimitPerMinute: 600 });
    const key = await createKey(api.db, acme.organizationId, PERMISSIONS);
    const missing = await app.request('/api/v1/experiments/99', {
      headers: { 'Service-API-Key': key },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('ratelimit-policy')).toBe('"default";q=600;w=60');
    expect(missing.headers.get('ratelimit')).toBe('"default";r=599;t=1');
    const unknown = await app.request('/api/v1/experiments/99', {
      headers: { 'Service-API-Key': 'agl_nope_nope' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('ratelimit')).toBeNull();
  });

  it('is off unless configured (the default of createApp)', async () => {
    for (let i = 0; i < 20; i += 1) {
      const answer = await api.request('GET', '/api/v1/events/?limit=0', { key: acme.key });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('ratelimit')).toBeNull();
    }
  });
});

describe('failed authentications', () => {
  const unknownKey = `agl_${'x'.repeat(12)}_${'y'.repeat(32)}`;
  const wrongSecret = () => `${acme.key.slice(0, 'agl_'.length + 12)}_${'W'.repeat(32)}`;

  /** An app allowing `perMinute` failures per address and per key id, no trusted proxy. */
  const limitedApp = (db: Db = api.db, perMinute = 3) =>
    createApp({ db, authFailureLimit: { perMinute, trustedProxies: new Set() } });

  /** A GET from the socket address `from` (the app reads the peer from Node's request). */
  const get = async (app: ReturnType<typeof createApp>, from: string, key?: string) => {
    const res = await app.request(
      '/api/v1/events/?limit=0',
      { headers: key === undefined ? {} : { 'Service-API-Key': key } },
      { incoming: { socket: { remoteAddress: from } } },
    );
    const body = (await res.json()) as Partial<Schemas['ErrorResponse']>;
    return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
  };

  it('serves a valid key at an address whose other clients keep failing', async () => {
    const app = limitedApp();
    const address = '192.0.2.10';
    for (let i = 0; i < 3; i += 1) expect((await get(app, address)).status).toBe(401);
    const refused = await get(app, address);
    expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    expect(refused.body.detail).toContain('from this address');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    // The failing client goes on; the valid key beside it is served every time.
    for (let i = 0; i < 5; i += 1) {
      expect((await get(app, address)).status).toBe(429);
      expect((await get(app, address, 'not a key')).status).toBe(429);
      expect((await get(app, address, acme.key)).status).toBe(200);
    }
    // A well-formed key that fails is looked up, and then refused with 429 too.
    expect((await get(app, address, unknownKey)).status).toBe(429);
    // Other addresses keep their own budgets.
    expect((await get(app, '192.0.2.11')).status).toBe(401);
  });

  it('counts an IPv6 client by its /64, and IPv4-mapped IPv6 as IPv4', async () => {
    const app = limitedApp();
    for (let i = 1; i <= 3; i += 1) {
      expect((await get(app, `2001:db8:1:1::${i}`)).status).toBe(401);
    }
    // Rotating through the same /64 buys nothing, in any spelling of the address.
    expect((await get(app, '2001:db8:1:1:ffff:ffff:ffff:ffff')).status).toBe(429);
    expect((await get(app, '2001:0DB8:0001:0001:0:0:0:abcd')).status).toBe(429);
    // The neighbouring /64 is another client.
    expect((await get(app, '2001:db8:1:2::1')).status).toBe(401);

    for (let i = 0; i < 3; i += 1) expect((await get(app, '::ffff:198.51.100.7')).status).toBe(401);
    expect((await get(app, '198.51.100.7')).status).toBe(429);
    expect((await get(app, '::ffff:c633:6407')).status).toBe(429);
    expect((await get(app, '198.51.100.8')).status).toBe(401);
  });

  it('limits a key id that keeps failing from any address, while its valid secret works', async () => {
    const app = limitedApp();
    for (let i = 1; i <= 3; i += 1) {
      expect((await get(app, `203.0.113.${i}`, wrongSecret())).status).toBe(401);
    }
    const refused = await get(app, '203.0.113.50', wrongSecret());
    expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED' } });
    expect(refused.body.detail).toContain('with this key id');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await get(app, '203.0.113.51', acme.key)).status).toBe(200);
    // That address still has its budget for anything else; other key ids have theirs.
    expect((await get(app, '203.0.113.50')).status).toBe(401);
    expect((await get(app, '203.0.113.52', unknownKey)).status).toBe(401);
  });

  it('refuses requests without a well-formed key at a spent address without reading the database', async () => {
    const db = await createTestDb();
    const app = limitedApp(db, 2);
    const address = '192.0.2.99';
    for (let i = 0; i < 2; i += 1) expect((await get(app, address)).status).toBe(401);
    // From here on any read of the database fails: only answers that read nothing succeed.
    await db.close();
    expect((await get(app, address)).status).toBe(429);
    expect((await get(app, address, 'agl_short')).status).toBe(429);
    // A well-formed key is looked up even here (it might be valid), which the closed database
    // shows: this is what the two answers above did not do.
    expect((await get(app, address, unknownKey)).status).toBeGreaterThanOrEqual(500);
  });

  it('reads addresses in any spelling, and X-Forwarded-For entries with ports', () => {
    expect(canonicalAddress('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(canonicalAddress('::FFFF:7F00:1')).toBe('127.0.0.1');
    expect(canonicalAddress('::1')).toBe('0:0:0:0:0:0:0:1');
    expect(canonicalAddress('fe80::1%eth0')).toBe('fe80:0:0:0:0:0:0:1');
    expect(canonicalAddress('unknown')).toBe('unknown');
    expect(addressBudgetName('2001:db8:a:b:1:2:3:4')).toBe('2001:db8:a:b::/64');
    expect(addressBudgetName('203.0.113.5')).toBe('203.0.113.5');

    const viaProxy = (forwardedFor: string) =>
      clientAddress(
        {
          env: { incoming: { socket: { remoteAddress: '::ffff:10.0.0.1' } } },
          req: { header: () => forwardedFor },
        } as never,
        new Set(['10.0.0.1']),
      );
    expect(viaProxy('198.51.100.1, 203.0.113.5:4711')).toBe('203.0.113.5');
    expect(viaProxy('[2001:db8::7]:443')).toBe('2001:db8:0:0:0:0:0:7');
    expect(viaProxy('198.51.100.1, 10.0.0.1')).toBe('198.51.100.1');
    // An entry that is not an address ends the walk: what lies before it is the client's say.
    expect(viaProxy('198.51.100.1, unknown')).toBe('10.0.0.1');
  });

  it('keeps at most maxBuckets names apart; new names then share one budget until old ones refill', () => {
    let now = 0;
    const buckets = new TokenBuckets(2, () => now, 2);
    buckets.take('a');
    buckets.take('b');
    buckets.take('c');
    buckets.take('d');
    expect(buckets.size).toBe(3); // a, b and the shared one
    expect(buckets.waitSeconds('e')).toBeGreaterThan(0); // shares c's and d's spent budget
    expect(buckets.waitSeconds('a')).toBe(0);
    now += 60_000; // every bucket is full again, and forgotten
    expect(buckets.waitSeconds('e')).toBe(0);
    expect(buckets.size).toBe(1);
  });
});

describe('query string limit', () => {
  it('answers 422 for a query string over 8192 characters', async () => {
    const values = Array.from({ length: 800 }, (_, i) => `search_field_values=value-${i}`).join(
      '&',
    );
    const res = await api.request<Schemas['HTTPValidationError']>(
      'GET',
      `/api/v1/events/?${values}`,
      { key: acme.key },
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query'], type: 'too_long' });
  });
});

// Node's HTTP server at work, before any of our code: a server process of its own on an in-memory
// SQLite database, whatever the project's backend, so run once, in the SQLite project.
describe.skipIf(onPostgres)('header size limit', () => {
  it("refuses headers over Node's 16 KiB limit with 431 before any of our code runs", async () => {
    const server = await startServerProcess({ DATABASE_URL: ':memory:' }, { keepOutput: false });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${server.baseUrl}/api/v1/events/`, {
          headers: { 'Service-API-Key': acme.key, 'X-Padding': 'x'.repeat(20_000) },
        });
        req.on('response', (res) => resolve(res.statusCode!));
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(431);
    } finally {
      await server.stop();
    }
  }, 30_000);
});

describe.skipIf(onPostgres)('slow clients', () => {
  it('drops a connection that never finishes its headers', async () => {
    const server = await startServerProcess({ DATABASE_URL: ':memory:' }, { keepOutput: false });
    try {
      const { port } = new URL(server.baseUrl);
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const started = Date.now();
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'),
        );
        socket.resume(); // read (and drop) the 408, so the close is seen
        socket.on('close', () => resolve(Date.now() - started));
        socket.on('error', reject);
        socket.setTimeout(25_000, () => reject(new Error('the server kept the connection open')));
      });
      // headersTimeout is 10 s, checked every 2 s.
      expect(closedAfter).toBeGreaterThanOrEqual(9_000);
      expect(closedAfter).toBeLessThan(15_000);
    } finally {
      await server.stop();
    }
  }, 40_000);
});
