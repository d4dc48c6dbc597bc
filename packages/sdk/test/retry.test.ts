// Retries, backoff, per-call options and idempotency keys, with an injected fetch (timeouts and
// aborts: timeouts.test.ts).

import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiConnectionError,
  ApiTimeoutError,
  BadRequestError,
  ConflictError,
  GoneError,
  InternalServerError,
  RateLimitError,
  UnprocessableEntityError,
} from '../src/index.js';
import {
  backoffMs,
  jitteredRetryAfterMs,
  retryAfterMs,
  retryingFetch,
  RETRY_COUNT_HEADER,
} from '../src/retry.js';
import { client, hanging, json, scripted } from './scripted-fetch.js';
import { UUID_V7 } from './uuid-v7.js';

const page = { items: [], page: 0, page_size: 25, total_count: 0, total_pages: 0 };
const experiment = { name: 'x', target_id: 1, variants: [] };

describe('retries', () => {
  it("takes back each wait's abort listener once the wait is over", async () => {
    const { fetch } = scripted(() => json(429, {}, { 'Retry-After': '0' }));
    const caller = new AbortController();
    const send = retryingFetch(fetch, { maxRetries: 5, timeoutMs: 10_000, signal: caller.signal });
    const request = new Request('http://127.0.0.1:9/api/v1/events/');
    expect((await send(request)).status).toBe(429);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('retries a 429 after Retry-After and then succeeds', async () => {
    const { fetch, requests } = scripted(
      () =>
        json(
          429,
          { detail: 'slow down', code: 'RATE_LIMITED', request_id: 'r' },
          { 'Retry-After': '0' },
        ),
      () => json(200, page),
    );
    expect(await client(fetch).events.list()).toEqual(page);
    expect(requests).toHaveLength(2);
  });

  it('waits as long as Retry-After says', async () => {
    const waits: number[] = [];
    const { fetch, requests } = scripted(
      () => json(429, {}, { 'Retry-After': '2' }),
      () => json(503, {}),
      () => json(200, page),
    );
    const send = retryingFetch(fetch, {
      maxRetries: 2,
      timeoutMs: 1000,
      initialDelayMs: 100,
      sleep: async (ms) => void waits.push(ms),
      random: () => 0.25,
    });
    const response = await send(new Request('http://127.0.0.1:9/api/v1/events/'));
    expect(response.status).toBe(200);
    expect(requests).toHaveLength(3);
    // Retry-After 2 s, and a quarter of it again as jitter.
    expect(waits[0]).toBe(2500);
    // Without Retry-After: exponential backoff with up to a quarter of jitter.
    expect(waits[1]).toBeGreaterThanOrEqual(150);
    expect(waits[1]).toBeLessThanOrEqual(200);
  });

  describe('a long Retry-After (an injected clock: vitest fake timers)', () => {
    afterEach(() => {
      vi.useRealTimers();
      vi.restoreAllMocks();
    });

    it('is waited in full up to 60 s, and up to as long again: 30 s and 15 s here', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      vi.spyOn(Math, 'random').mockReturnValue(0.5);
      const { fetch, requests } = scripted(
        () => json(429, {}, { 'Retry-After': '30' }),
        () => json(200, page),
      );
      let settled = false;
      const pending = client(fetch)
        .events.list()
        .finally(() => (settled = true));
      await vi.advanceTimersByTimeAsync(44_999);
      expect(requests).toHaveLength(1);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await pending).toEqual(page);
      expect(requests).toHaveLength(2);
    });

    it('is read from retry-after-ms first', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const { fetch, requests } = scripted(
        () => json(503, {}, { 'retry-after-ms': '30000', 'Retry-After': '1' }),
        () => json(200, page),
      );
      vi.spyOn(Math, 'random').mockReturnValue(0);
      const pending = client(fetch).events.list();
      await vi.advanceTimersByTimeAsync(29_000);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await pending).toEqual(page);
    });

    it('over 60 s fails at once with the error, saying how long the server asked', async () => {
      const { fetch, requests } = scripted(() =>
        json(
          429,
          { detail: 'slow down', code: 'RATE_LIMITED', request_id: 'r' },
          {
            'Retry-After': '61',
          },
        ),
      );
      const error = await client(fetch)
        .events.list()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      expect((error as Error).message).toBe(
        '429 slow down (the server asked to wait 61 s before a retry)',
      );
      expect(requests).toHaveLength(1);
    });
  });

  it('numbers each attempt in Agentline-Retry-Count', async () => {
    const { fetch, requests } = scripted(
      () => json(503, {}, { 'Retry-After': '0' }),
      () => json(503, {}, { 'Retry-After': '0' }),
      () => json(200, page),
    );
    await client(fetch).events.list();
    expect(requests.map((r) => r.headers.get(RETRY_COUNT_HEADER))).toEqual(['0', '1', '2']);
  });

  it('gives up after maxRetries with the last error', async () => {
    const { fetch, requests } = scripted(() =>
      json(500, { detail: 'boom', code: 'INTERNAL', request_id: 'r' }),
    );
    await expect(client(fetch, { maxRetries: 2 }).experiments.get(1)).rejects.toBeInstanceOf(
      InternalServerError,
    );
    expect(requests).toHaveLength(3);
  }, 10_000);

  it.each([
    [400, BadRequestError],
    [409, ConflictError],
    [410, GoneError],
    [422, UnprocessableEntityError],
  ])('never retries %i', async (status, ErrorClass) => {
    const { fetch, requests } = scripted(() => json(status, { detail: [] }));
    await expect(client(fetch).experiments.get(1)).rejects.toBeInstanceOf(ErrorClass);
    expect(requests).toHaveLength(1);
  });

  it('retries a POST on 5xx, since its Idempotency-Key makes the retry safe', async () => {
    const failing = scripted(
      () => json(503, {}),
      () => json(200, { id: 7 }),
    );
    expect(await client(failing.fetch).experiments.create(experiment as never)).toEqual({ id: 7 });
    expect(failing.requests).toHaveLength(2);
    const keys = failing.requests.map((r) => r.headers.get('idempotency-key'));
    expect(keys[1]).toBe(keys[0]);
  });

  it('retries a POST after a 429', async () => {
    const limited = scripted(() => json(429, {}, { 'Retry-After': '0' }));
    await expect(
      client(limited.fetch, { maxRetries: 1 }).experiments.create(experiment as never),
    ).rejects.toBeInstanceOf(RateLimitError);
    expect(limited.requests).toHaveLength(2);
  });

  it('keeps one Idempotency-Key across the retries of a POST, and a new one per call', async () => {
    const { fetch, requests } = scripted(
      () => json(429, {}, { 'Retry-After': '0' }),
      () => json(200, { id: 1 }),
      () => json(200, { id: 2 }),
    );
    const sdk = client(fetch);
    await sdk.experiments.create(experiment);
    await sdk.experiments.create(experiment);
    const keys = requests.map((r) => r.headers.get('idempotency-key'));
    // A UUIDv7 (idempotency-key.test.ts), made at the call.
    expect(keys[0]).toMatch(UUID_V7);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    // The body is sent again, whole, on the retry.
    expect(await requests[1]!.text()).toBe(JSON.stringify(experiment));
  });

  it('retries a POST whose connection was refused, since nothing was sent', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: { code: 'ECONNREFUSED' },
    });
    const { fetch, requests } = scripted(
      () => Promise.reject(refused),
      () => json(200, { session_id: 's' }),
    );
    expect(await client(fetch).sessions.route(1)).toEqual({ session_id: 's' });
    expect(requests).toHaveLength(2);
  });

  it('wraps a connection that keeps failing in ApiConnectionError', async () => {
    const reset = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    const { fetch, requests } = scripted(() => Promise.reject(reset));
    const error = await client(fetch, { maxRetries: 1 })
      .sessions.route(1)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    // The POST may have run, but its Idempotency-Key makes the retry safe: tried twice.
    expect(requests).toHaveLength(2);
  });
});

describe('per-call options', () => {
  it('a timeout and maxRetries for one call only', async () => {
    const { fetch, requests } = hanging();
    const sdk = client(fetch, { timeout: 60_000, maxRetries: 2 });
    const started = Date.now();
    const error = await sdk.events
      .list({}, { timeout: 50, maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiTimeoutError);
    expect((error as Error).message).toContain('No answer within 50 ms');
    expect(requests).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('headers and an Idempotency-Key of its own, kept across the retries', async () => {
    const { fetch, requests } = scripted(
      () => json(503, {}, { 'Retry-After': '0' }),
      () => json(200, { session_id: 's' }),
    );
    await client(fetch).sessions.route(
      1,
      {},
      { idempotencyKey: 'order-42', headers: { 'X-Trace': 't-1' } },
    );
    expect(requests.map((r) => r.headers.get('idempotency-key'))).toEqual(['order-42', 'order-42']);
    expect(requests.map((r) => r.headers.get('x-trace'))).toEqual(['t-1', 't-1']);
    expect(requests[0]!.headers.get('service-api-key')).toBe('k');
  });

  it('reach every page of iterate()', async () => {
    const { fetch, requests } = scripted(
      () => json(200, { ...page, items: [{ timestamp: 'a' }], next_cursor: 'c1' }),
      () => json(200, { ...page, items: [{ timestamp: 'b' }], next_cursor: null }),
    );
    const seen: string[] = [];
    for await (const event of client(fetch).events.iterate(
      { limit: 1 },
      { headers: { 'X-Trace': 'walk' } },
    ))
      seen.push(event.timestamp);
    expect(seen).toEqual(['a', 'b']);
    expect(requests.map((r) => r.headers.get('x-trace'))).toEqual(['walk', 'walk']);
  });
});

describe('helpers', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-22T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'Retry-After': '3' }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'Retry-After': 'Sun, 22 Nov 2026 00:00:05 GMT' }), now)).toBe(
      5000,
    );
    expect(retryAfterMs(new Headers({ 'Retry-After': 'soon' }), now)).toBeNull();
    expect(retryAfterMs(new Headers(), now)).toBeNull();
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'Retry-After': '3' }), now)).toBe(
      250,
    );
  });

  it('waits from Retry-After to twice Retry-After, never sooner', () => {
    expect(jitteredRetryAfterMs(1000, () => 0)).toBe(1000);
    expect(jitteredRetryAfterMs(1000, () => 0.5)).toBe(1500);
    expect(jitteredRetryAfterMs(1000, () => 0.999)).toBeCloseTo(1999);
    // Calls refused together come back spread over the second after the hint.
    const waits = Array.from({ length: 64 }, () => jitteredRetryAfterMs(1000));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    expect(Math.max(...waits)).toBeLessThan(2000);
    expect(new Set(waits).size).toBeGreaterThan(32);
  });

  it('spreads 64 calls that a full queue refused together over the second after Retry-After', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      // A server whose queue holds 4: of calls arriving within 10 ms of each other, the fifth on
      // is refused with Retry-After: 1 (an injected clock tells when each attempt arrives).
      const arrivals: number[] = [];
      const start = Date.now();
      const fetch = async () => {
        const now = Date.now() - start;
        arrivals.push(now);
        const recent = arrivals.filter((time) => now - time < 10).length;
        return recent > 4
          ? json(
              429,
              { detail: 'queue full', code: 'RATE_LIMITED', request_id: 'r' },
              {
                'Retry-After': '1',
              },
            )
          : json(200, page);
      };
      const calls = Promise.all(Array.from({ length: 64 }, () => client(fetch).events.list()));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await calls).toHaveLength(64);
      // 60 of 64 came back within the second after the hint, and no more retries were needed
      // than the default two.
      expect(arrivals.filter((time) => time >= 1000 && time < 2000).length).toBeGreaterThan(50);
    } finally {
      vi.useRealTimers();
    }
  });

  it('backs off exponentially up to the cap', () => {
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const delay = backoffMs(attempt, 500, 8000);
      const full = Math.min(500 * 2 ** attempt, 8000);
      expect(delay).toBeGreaterThan(full * 0.75 - 1e-9);
      expect(delay).toBeLessThanOrEqual(full);
    }
  });
});
