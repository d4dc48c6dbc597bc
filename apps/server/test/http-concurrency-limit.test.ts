// Admission (http/admission.ts), through a real server on 127.0.0.1: a key's requests past its
// share wait in its queue instead of a 429, other keys are not held up by them, and only a full
// queue or a long wait is refused. A request whose body has not finished arriving is in progress
// (authenticated, admitted, its body being read), so the tests hold a key's slots without any
// timing, and learn that a queue is full from the refusal of one more request.

import { request as httpRequest, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type AppOptions } from '../src/app.js';
import { DEFAULT_CONFIG, loadConfig } from '../src/config.js';
import {
  createTenant,
  createTestApi,
  type Schemas,
  type Tenant,
  type TestApi,
} from './support/harness.js';
import { openEventStream } from './support/event-stream.js';
import {
  sendRaw,
  startLiveServer,
  type LiveServer,
  type RawResponse,
} from './support/live-server.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';

const SHARE = DEFAULT_CONFIG.concurrentRequestsPerKey;
let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let globexFx: RoutingFixture;
const servers: LiveServer[] = [];

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  globex = await createTenant(api.db, 'Globex');
  fx = await loadRoutingFixture(api.db, acme.organizationId);
  globexFx = await loadRoutingFixture(api.db, globex.organizationId);
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await api?.close();
});

/** A server with the production defaults of admission, unless `options` says otherwise. */
async function serve(options: Partial<AppOptions> = {}): Promise<string> {
  const server = await startLiveServer(
    createApp({
      db: api.db,
      concurrentRequestsPerKey: DEFAULT_CONFIG.concurrentRequestsPerKey,
      concurrentListReadsPerKey: DEFAULT_CONFIG.concurrentListReadsPerKey,
      ...options,
    }),
  );
  servers.push(server);
  return server.baseUrl;
}

interface Held {
  request: ClientRequest;
  /** The status once the request has ended; it stays pending while the body is held back. */
  answer: Promise<number | 'aborted'>;
}

/** A session routing request whose body is sent in part: it holds its slot until finished. */
function hold(baseUrl: string, key: string): Held {
  const request = httpRequest(`${baseUrl}/api/v1/channels/targets/${fx.targets.main}/sessions`, {
    method: 'POST',
    headers: { 'Service-API-Key': key, 'Content-Type': 'application/json' },
  });
  const answer = new Promise<number | 'aborted'>((resolve) => {
    request.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    request.on('error', () => resolve('aborted'));
  });
  // Chunked: the server cannot know where the body ends until the last chunk.
  request.write('{"user_id": ');
  return { request, answer };
}

async function finishAll(held: Held[]): Promise<void> {
  for (const h of held) h.request.end('"caller"}');
  expect(await Promise.all(held.map((h) => h.answer))).toEqual(held.map(() => 200));
}

const get = (baseUrl: string, key: string, path = '/api/v1/agents/') =>
  sendRaw<Schemas['ErrorResponse']>(baseUrl, {
    method: 'GET',
    path,
    headers: { 'Service-API-Key': key },
  });

const route = (baseUrl: string, key: string, userId: string, targetId = fx.targets.main) =>
  sendRaw(baseUrl, {
    path: `/api/v1/channels/targets/${targetId}/sessions`,
    headers: { 'Service-API-Key': key, 'Content-Type': 'application/json' },
    chunks: [JSON.stringify({ user_id: userId })],
  });

const NO_SUCH_EXPERIMENT = '/api/v1/experiments/2000000000';

/**
 * Holds `share` slots of `key` (all it has): a probe sent after the held requests that gets no
 * answer for a while waits in the queue, so they are in. The probe stays queued (one place of
 * the queue) and is answered 404 once a slot frees; a probe that got in first is sent again.
 */
async function holdShare(
  baseUrl: string,
  key: string,
  share = SHARE,
): Promise<{ held: Held[]; probe: Promise<RawResponse<Schemas['ErrorResponse']>> }> {
  const held = Array.from({ length: share }, () => hold(baseUrl, key));
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const probe = get(baseUrl, key, NO_SUCH_EXPERIMENT);
    if (await waitsLongerThan(probe, 150)) return { held, probe };
  }
  throw new Error(`the held requests never took the key's ${share} slots`);
}

async function waitsLongerThan(answer: Promise<unknown>, ms: number): Promise<boolean> {
  const timeUp = Symbol('time up');
  const first = await Promise.race([
    answer,
    new Promise((resolve) => setTimeout(() => resolve(timeUp), ms)),
  ]);
  return first === timeUp;
}

const METRICS_TOKEN = 'metrics-token-for-the-queue';

/** Admission's gauge of every key's requests, `running` or `waiting`, as /metrics reports it. */
async function admissionGauge(baseUrl: string, which: 'running' | 'waiting'): Promise<number> {
  const response = await fetch(`${baseUrl}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const name = `agentline_admission_${which}_requests`;
  const line = new RegExp(`^${name} (\\d+)$`, 'm').exec(await response.text());
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Number(line[1]);
}

async function untilWaiting(baseUrl: string, count: number, what: string): Promise<void> {
  for (let attempt = 0; (await admissionGauge(baseUrl, 'waiting')) !== count; attempt += 1) {
    if (attempt > 1000) throw new Error(what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A 429 `RATE_LIMITED` whose detail says each of `says`, to be sent again after 1 s. */
function expectRefusal(response: RawResponse<Schemas['ErrorResponse']>, says: string[]): void {
  expect(response.status).toBe(429);
  expect(response.body.code).toBe('RATE_LIMITED');
  for (const words of says) expect(response.body.detail).toContain(words);
  expect(response.headers['retry-after']).toBe('1');
}

function queueWait(response: RawResponse): number {
  const value = response.headers['x-queue-wait-ms'];
  expect(value).toMatch(/^\d+$/);
  return Number(value);
}

describe('admission with the default settings', () => {
  it("serves one key's 64 routings and another key's 64 lists at once, without a 429", async () => {
    const baseUrl = await serve();
    const answers = await Promise.all([
      ...Array.from({ length: 64 }, (_, i) => route(baseUrl, acme.key, `caller-${i}`)),
      ...Array.from({ length: 64 }, () => get(baseUrl, globex.key)),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  });

  it("refuses a key's requests past the 256 its queue holds, saying so, and serves the rest", async () => {
    const baseUrl = await serve();
    const { held, probe } = await holdShare(baseUrl, acme.key);
    // With the probe, 300 requests wait for a slot: 256 fit in the queue.
    const queued = [
      probe,
      ...Array.from({ length: 299 }, () => get(baseUrl, acme.key, NO_SUCH_EXPERIMENT)),
    ];
    const refusals: Array<RawResponse<Schemas['ErrorResponse']>> = [];
    const refused = queued.map((answer) =>
      answer.then((response) => {
        if (response.status === 429) refusals.push(response);
        return response;
      }),
    );
    // The refusals come at once, while the others wait.
    for (let attempt = 0; refusals.length < 44 && attempt < 500; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(refusals).toHaveLength(44);
    for (const refusal of refusals) {
      expectRefusal(refusal, [
        'The queue of this API key on this server is full',
        '256 of its requests (QUEUED_REQUESTS_PER_KEY)',
        'raise QUEUED_REQUESTS_PER_KEY',
      ]);
      expect(queueWait(refusal)).toBe(0);
    }
    await finishAll(held);
    const served = (await Promise.all(refused)).filter((answer) => answer.status !== 429);
    expect(served.map((answer) => answer.status)).toEqual(served.map(() => 404));
    expect(served).toHaveLength(256);
    expect(Math.min(...served.map(queueWait))).toBeGreaterThan(0);
  });

  it('never queues event streams and /healthz, even beside a full queue', async () => {
    const baseUrl = await serve({ queuedRequestsPerKey: 1 });
    const { held, probe } = await holdShare(baseUrl, acme.key);
    expect((await get(baseUrl, acme.key, NO_SUCH_EXPERIMENT)).status).toBe(429);
    const stream = await openEventStream(baseUrl, { key: acme.key });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('x-queue-wait-ms')).toBe('0');
    stream.close();
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status).toBe(200);
    await finishAll(held);
    expect((await probe).status).toBe(404);
  });

  it("answers another key's requests beside a backlog of 500 without waiting", async () => {
    // The backlog waits for the whole test: on a busy machine, its 500 connections can take
    // longer to arrive than the default 10 s of waiting, whose 429 is another test's.
    const baseUrl = await serve({
      queuedRequestsPerKey: 500,
      queueWaitMs: 60_000,
      metricsToken: METRICS_TOKEN,
    });
    const { held, probe } = await holdShare(baseUrl, acme.key);
    const backlog = [
      probe,
      ...Array.from({ length: 499 }, () => get(baseUrl, acme.key, NO_SUCH_EXPERIMENT)),
    ];
    // Asked by the gauge: a request sent to learn it would take a place while the queue fills.
    await untilWaiting(baseUrl, 500, 'the backlog never filled the queue');
    expectRefusal(await get(baseUrl, acme.key, NO_SUCH_EXPERIMENT), ['500 of its requests']);
    for (const path of ['/api/v1/agents/', NO_SUCH_EXPERIMENT]) {
      const other = await get(baseUrl, globex.key, path);
      expect(other.status).not.toBe(429);
      expect(queueWait(other)).toBe(0);
    }
    const routed = await route(baseUrl, globex.key, 'beside the backlog', globexFx.targets.main);
    expect(routed.status).toBe(200);
    expect(queueWait(routed)).toBe(0);

    await finishAll(held);
    const served = await Promise.all(backlog);
    expect(new Set(served.map((answer) => answer.status))).toEqual(new Set([404]));
  });
});

describe('admission with a short queue wait', () => {
  it('answers 429 saying how long the request waited, and what to change', async () => {
    const baseUrl = await serve({ queueWaitMs: 400 });
    const { held, probe } = await holdShare(baseUrl, acme.key);
    const refused = await probe;
    expectRefusal(refused, [
      'waited 400 ms (QUEUE_WAIT_MS)',
      'raise CONCURRENT_REQUESTS_PER_KEY or QUEUE_WAIT_MS',
    ]);
    expect(queueWait(refused)).toBeGreaterThanOrEqual(390);
    await finishAll(held);
  });
});

describe('a queued request whose client disconnects', () => {
  it('leaves the queue at once and never runs', async () => {
    // The probe waits in the queue for the whole test: on a busy machine that can pass the
    // default 10 s of waiting, whose 429 is another test's.
    const baseUrl = await serve({
      queuedRequestsPerKey: 2,
      queueWaitMs: 60_000,
      metricsToken: METRICS_TOKEN,
    });
    const { held, probe } = await holdShare(baseUrl, acme.key);
    await untilWaiting(baseUrl, 1, 'the probe is not in the queue');
    expect(await admissionGauge(baseUrl, 'running')).toBe(SHARE);
    const name = `never created ${Date.now()}`;
    const create = httpRequest(`${baseUrl}/api/v1/experiments/`, {
      method: 'POST',
      headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
    });
    create.on('error', () => undefined);
    create.end(
      JSON.stringify(
        experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned], { name }),
      ),
    );
    await untilWaiting(baseUrl, 2, 'the create never reached the queue');
    const full = await get(baseUrl, acme.key, NO_SUCH_EXPERIMENT);
    expectRefusal(full, ['2 of its requests (QUEUED_REQUESTS_PER_KEY)']);

    create.destroy();
    // Its place is free again while every slot is still held.
    await untilWaiting(baseUrl, 1, 'the create never left the queue');
    const waiting = get(baseUrl, acme.key, NO_SUCH_EXPERIMENT);
    await untilWaiting(baseUrl, 2, 'a request after the create found no place in the queue');
    await finishAll(held);
    expect((await probe).status).toBe(404);
    expect((await waiting).status).toBe(404);
    await untilWaiting(baseUrl, 0, 'the queue never emptied');
    expect(await admissionGauge(baseUrl, 'running')).toBe(0);
    const found = await get(
      baseUrl,
      acme.key,
      `/api/v1/experiments/?search_fields=name_exact&search_field_values=${encodeURIComponent(name)}`,
    );
    expect(found.status).toBe(200);
    expect((found.body as unknown as Schemas['ExperimentListResponse']).total_count).toBe(0);
  });
});

describe('a slot comes back', () => {
  it('after an error answer, and after a client that went away mid-request', async () => {
    const baseUrl = await serve({ concurrentRequestsPerKey: 1 });
    const failing = await holdShare(baseUrl, acme.key, 1);
    failing.held[0]!.request.end('}');
    expect(await failing.held[0]!.answer).toBe(422);
    expect((await failing.probe).status).toBe(404);

    const leaving = await holdShare(baseUrl, acme.key, 1);
    leaving.held[0]!.request.destroy();
    expect(await leaving.held[0]!.answer).toBe('aborted');
    expect((await leaving.probe).status).toBe(404);
  });
});

describe('configuration', () => {
  it('gives each key 4 requests in progress, a queue of 256 and 10 s of waiting by default', () => {
    expect(loadConfig({}).concurrentRequestsPerKey).toBe(4);
    expect(loadConfig({}).queuedRequestsPerKey).toBe(256);
    expect(loadConfig({}).queueWaitMs).toBe(10_000);
    expect(loadConfig({ CONCURRENT_REQUESTS_PER_KEY: '0' }).concurrentRequestsPerKey).toBe(0);
    expect(loadConfig({ QUEUED_REQUESTS_PER_KEY: '0' }).queuedRequestsPerKey).toBe(0);
    expect(() => loadConfig({ CONCURRENT_REQUESTS_PER_KEY: '-1' })).toThrow(
      /^CONCURRENT_REQUESTS_PER_KEY must be a whole number/,
    );
    expect(() => loadConfig({ QUEUE_WAIT_MS: '0' })).toThrow(
      /^QUEUE_WAIT_MS must be a whole number from 1 to 20000/,
    );
    expect(loadConfig({}).listQueryTimeoutMs).toBe(5000);
    expect(loadConfig({ LIST_QUERY_TIMEOUT_MS: '0' }).listQueryTimeoutMs).toBe(0);
  });
});
