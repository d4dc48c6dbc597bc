// The per-key cap on requests in progress (http/concurrency-limit.ts), through a real server on
// 127.0.0.1. A request whose body has not finished arriving is in progress (authenticated, its
// slot taken, its body being read), so the tests hold slots without any timing: past the cap the
// key's next request is a 429 with Retry-After while other keys are served, and a slot comes back
// when its request ends, with an answer, an error or a client that went away.

import { request as httpRequest, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import {
  createKey,
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import {
  sendRaw,
  startLiveServer,
  type LiveServer,
  type RawResponse,
} from './support/live-server.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';

const LIMIT = 2;
let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let server: LiveServer;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  fx = await loadRoutingFixture(api.db, acme.organizationId);
  server = await startLiveServer(createApp({ db: api.db, concurrentRequestsPerKey: LIMIT }));
});

afterAll(async () => {
  await server?.close();
  await api?.close();
});

interface Held {
  request: ClientRequest;
  /** The answer once the request has ended; it stays pending while the body is held back. */
  answer: Promise<{ status: number; body: string } | 'aborted'>;
  settled: boolean;
}

/** A session routing request whose body is sent in part: it stays in progress until finished. */
function hold(key: string, targetId: number): Held {
  const request = httpRequest(`${server.baseUrl}/api/v1/channels/targets/${targetId}/sessions`, {
    method: 'POST',
    headers: { 'Service-API-Key': key, 'Content-Type': 'application/json' },
  });
  const held: Held = {
    request,
    settled: false,
    answer: new Promise((resolve) => {
      request.on('response', (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      request.on('error', () => resolve('aborted'));
    }),
  };
  void held.answer.then(() => (held.settled = true));
  // Chunked: the server cannot know where the body ends until the last chunk.
  request.write('{"user_id": ');
  return held;
}

function finish(held: Held, rest: string) {
  held.request.end(rest);
  return held.answer;
}

const get = (key: string, path = '/api/v1/agents/') =>
  sendRaw<Schemas['ErrorResponse']>(server.baseUrl, {
    method: 'GET',
    path,
    headers: { 'Service-API-Key': key },
  });

/**
 * Holds `LIMIT` requests of `key` in progress and returns them with the refusal of the next one.
 * Probes are sent one at a time, and a request's slot is free before its answer is written, so a
 * probe refused means the held requests hold every slot; one that got in first is held again.
 */
async function fillSlots(
  key: string,
  targetId: number,
  held: Held[] = [],
): Promise<{ held: Held[]; refused: RawResponse<Schemas['ErrorResponse']> }> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    held = held.filter((h) => !h.settled);
    while (held.length < LIMIT) held.push(hold(key, targetId));
    const probe = await get(key);
    if (probe.status === 429) return { held, refused: probe };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the held requests of the key never took its ${LIMIT} slots`);
}

/**
 * Sends `concurrent` probes at once until all are answered: the slot of a request whose client
 * left comes back once the server has noticed.
 */
async function untilServed(key: string, concurrent = 1): Promise<number[]> {
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const probes = await Promise.all(Array.from({ length: concurrent }, () => get(key)));
    const statuses = probes.map((probe) => probe.status);
    if (!statuses.includes(429)) return statuses;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the key never got ${concurrent} slots back`);
}

describe('per-key cap on requests in progress', () => {
  it('refuses the key its next request with 429 and Retry-After, and serves other keys', async () => {
    const { held, refused } = await fillSlots(acme.key, fx.targets.main);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(refused.body.detail).toContain(`already has ${LIMIT} requests in progress`);
    expect(refused.headers['retry-after']).toBe('1');
    // Another organization's key, and another key of the same organization, have slots of their own.
    expect((await get(globex.key)).status).toBe(200);
    const colleague = await createKey(api.db, acme.organizationId, ['CHANNELS_READ']);
    expect((await get(colleague)).status).toBe(200);
    // Still full: refusals take no slot and give none back.
    expect((await get(acme.key)).status).toBe(429);

    for (const h of held) {
      const answer = await finish(h, '"caller"}');
      expect(answer).toMatchObject({ status: 200 });
    }
    expect((await get(acme.key)).status).toBe(200);
  });

  it('gives the slot back after an error answer (bad JSON, an unknown target)', async () => {
    let { held } = await fillSlots(acme.key, fx.targets.main);
    expect(await finish(held[0]!, '}')).toMatchObject({ status: 422 });
    expect((await get(acme.key)).status).toBe(200);

    // The route itself fails: 404 for a target of no organization's.
    ({ held } = await fillSlots(acme.key, 999_999, held));
    const unknownTarget = held.find((h) => h.request.path.includes('/999999/'))!;
    expect(await finish(unknownTarget, '"caller"}')).toMatchObject({ status: 404 });
    expect((await get(acme.key)).status).toBe(200);

    for (const h of held.filter((h) => !h.settled)) await finish(h, '"caller"}');
  });

  it('gives the slot back when the client goes away mid-request', async () => {
    const { held } = await fillSlots(acme.key, fx.targets.main);
    held[0]!.request.destroy();
    expect(await held[0]!.answer).toBe('aborted');
    expect(await untilServed(acme.key)).toEqual([200]);
    // Once both are gone, the key has all its slots again.
    held[1]!.request.destroy();
    expect(await held[1]!.answer).toBe('aborted');
    expect(await untilServed(acme.key, LIMIT)).toEqual([200, 200]);
  });
});

describe('configuration', () => {
  it('caps each key at 4 requests in progress unless told otherwise; 0 turns the cap off', () => {
    expect(loadConfig({}).concurrentRequestsPerKey).toBe(4);
    expect(loadConfig({ CONCURRENT_REQUESTS_PER_KEY: '0' }).concurrentRequestsPerKey).toBe(0);
    expect(() => loadConfig({ CONCURRENT_REQUESTS_PER_KEY: '-1' })).toThrow(
      /^CONCURRENT_REQUESTS_PER_KEY must be a whole number/,
    );
    expect(loadConfig({}).listQueryTimeoutMs).toBe(5000);
    expect(loadConfig({ LIST_QUERY_TIMEOUT_MS: '0' }).listQueryTimeoutMs).toBe(0);
  });
});
