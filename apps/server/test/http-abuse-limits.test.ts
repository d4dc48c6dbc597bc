// Abuse limits: a per-key request budget (429 with Retry-After), a cap on the query string, and
// a server that drops clients who trickle their request instead of waiting for them.

import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { rateLimit } from '../src/http/rate-limit.js';
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
      return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
    };
    for (let i = 0; i < 3; i += 1) expect((await get(acme.key)).status).toBe(200);
    const limited = await get(acme.key);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect(limited.body.detail).toContain('more than 3 requests in a minute');
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    // Another key has its own budget.
    const other = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    expect((await get(other)).status).toBe(200);
  });

  it('refills the budget over time', async () => {
    let now = 0;
    const limiter = rateLimit(60, () => now);
    const context = { get: () => ({ keyId: 'k' }) } as never;
    const next = async () => {};
    for (let i = 0; i < 60; i += 1) await limiter(context, next);
    await expect(limiter(context, next)).rejects.toMatchObject({
      status: 429,
      headers: { 'Retry-After': '1' },
    });
    now += 1_000; // one more request's worth at 60 per minute
    await expect(limiter(context, next)).resolves.toBeUndefined();
    await expect(limiter(context, next)).rejects.toMatchObject({ status: 429 });
  });

  it('is off unless configured (the default of createApp)', async () => {
    for (let i = 0; i < 20; i += 1) {
      expect((await api.request('GET', '/api/v1/events/?limit=0', { key: acme.key })).status).toBe(
        200,
      );
    }
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

describe('header size limit', () => {
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

describe('slow clients', () => {
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
