// The client against an injected fetch: what it sends, how it reads answers and errors.

import { describe, expect, it } from 'vitest';
import {
  ApiConnectionError,
  ApiPromise,
  AuthenticationError,
  BadGatewayError,
  BadRequestError,
  ConflictError,
  GoneError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableEntityError,
  createClient,
} from '../src/index.js';

interface Recorded {
  url: URL;
  method: string;
  headers: Headers;
  body: string;
}

function fakeFetch(answer: (request: Recorded) => Response) {
  const calls: Recorded[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const recorded = {
      url: new URL(request.url),
      method: request.method,
      headers: request.headers,
      body: await request.text(),
    };
    calls.push(recorded);
    return answer(recorded);
  };
  return { fetch: fetch, calls };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

const emptyPage = { items: [], page: 0, page_size: 25, total_count: 0, total_pages: 0 };

describe('requests', () => {
  it('sends the key, a User-Agent and repeated keys for array parameters', async () => {
    const { fetch, calls } = fakeFetch(() => json(200, emptyPage));
    const client = createClient({ apiKey: 'agl_k_s', baseUrl: 'http://127.0.0.1:9', fetch });
    await client.events.list({
      search_fields: ['type', 'source'],
      search_field_values: ['a,b', 'c'],
      limit: 5,
    });
    const [call] = calls;
    expect(call!.headers.get('service-api-key')).toBe('agl_k_s');
    expect(call!.headers.get('user-agent')).toMatch(/^agentline-sdk-typescript\/\d+\.\d+\.\d+$/);
    expect(call!.url.pathname).toBe('/api/v1/events/');
    expect(call!.url.searchParams.getAll('search_fields')).toEqual(['type', 'source']);
    expect(call!.url.searchParams.getAll('search_field_values')).toEqual(['a,b', 'c']);
    expect(call!.url.searchParams.get('limit')).toBe('5');
  });

  it('reads the key from AGENTLINE_API_KEY when none is given', async () => {
    const { fetch, calls } = fakeFetch(() => json(200, emptyPage));
    process.env.AGENTLINE_API_KEY = 'agl_from_env';
    try {
      await createClient({ baseUrl: 'http://127.0.0.1:9', fetch }).events.list();
    } finally {
      delete process.env.AGENTLINE_API_KEY;
    }
    expect(calls[0]!.headers.get('service-api-key')).toBe('agl_from_env');
  });

  it('sends experiment bodies as JSON to the templated path', async () => {
    const { fetch, calls } = fakeFetch(() => json(200, { id: 4, deleted: true }));
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    const answer = await client.experiments.delete(4);
    expect(answer).toEqual({ id: 4, deleted: true });
    expect(calls[0]!.method).toBe('DELETE');
    expect(calls[0]!.url.pathname).toBe('/api/v1/experiments/4');
  });

  it('sends each webhooks call to its path, with a key on every POST and the replay body', async () => {
    const { fetch, calls } = fakeFetch(() => json(200, emptyPage));
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    await client.webhooks.rotateSecret(7);
    await client.webhooks.test(7, { idempotencyKey: 'test-7' });
    await client.webhooks.replay(7, { after_position: 'JvMyRXxTUxn1KMXCWfp4ww' });
    await client.webhooks.deliveries(7, { status: 'failed', limit: 5 });
    expect(calls.map(({ method, url }) => `${method} ${url.pathname}${url.search}`)).toEqual([
      'POST /api/v1/webhooks/endpoints/7/rotate-secret',
      'POST /api/v1/webhooks/endpoints/7/test',
      'POST /api/v1/webhooks/endpoints/7/replay',
      'GET /api/v1/webhooks/endpoints/7/deliveries?status=failed&limit=5',
    ]);
    expect(calls[0]!.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(calls[1]!.headers.get('idempotency-key')).toBe('test-7');
    expect(JSON.parse(calls[2]!.body)).toEqual({ after_position: 'JvMyRXxTUxn1KMXCWfp4ww' });
  });

  it('asks about its own key with a bodiless GET and hands back the answer', async () => {
    const info = {
      key_id: 'abcdefghijkl',
      name: 'console',
      role: 'reader',
      permissions: ['EVENTS_READ'],
      organization: { id: 1, name: 'Acme' },
    };
    const { fetch, calls } = fakeFetch(() => json(200, info));
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    expect(await client.keys.current()).toEqual(info);
    expect(calls.map(({ method, url }) => `${method} ${url.pathname}${url.search}`)).toEqual([
      'GET /api/v1/keys/current',
    ]);
    expect(calls[0]!.body).toBe('');
  });
});

describe('errors', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [410, GoneError],
    [429, RateLimitError],
    [500, InternalServerError],
    [502, BadGatewayError],
    [503, ServiceUnavailableError],
    [504, InternalServerError],
  ])(
    'throws the class for %i with status, request id, body and headers',
    async (status, ErrorClass) => {
      const body = { detail: 'what happened', code: 'RATE_LIMITED', request_id: 'req-1' };
      const { fetch } = fakeFetch(() => json(status, body, { 'X-Request-Id': 'req-1' }));
      const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
      const error = await client.experiments.get(1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrorClass);
      if (status >= 500) expect(error).toBeInstanceOf(InternalServerError);
      expect(error).toMatchObject({ status, body, requestId: 'req-1', code: 'RATE_LIMITED' });
      expect((error as { headers: Headers }).headers.get('x-request-id')).toBe('req-1');
      expect((error as Error).message).toBe(`${status} what happened (request id req-1)`);
    },
  );

  it('gives a 422 its typed detail', async () => {
    const body = {
      detail: [
        { loc: ['query', 'limit'], msg: 'limit must be at most 1000.', type: 'less_than_equal' },
      ],
    };
    const { fetch } = fakeFetch(() => json(422, body));
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    const error = await client.events.list({ limit: 1001 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).detail[0]!.loc).toEqual(['query', 'limit']);
    expect((error as Error).message).toContain('query.limit: limit must be at most 1000.');
    expect((error as UnprocessableEntityError).code).toBeNull();
  });

  it('wraps a failed connection in ApiConnectionError', async () => {
    const fetch = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof globalThis.fetch;
    const client = createClient({
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:9',
      fetch,
      maxRetries: 0,
    });
    const error = await client.events.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiConnectionError);
    expect((error as Error).message).toContain('fetch failed');
  });
});

describe('withResponse', () => {
  it('gives the body with the Response and its request id', async () => {
    const { fetch } = fakeFetch(() =>
      json(200, emptyPage, { 'X-Request-Id': 'req-9', 'X-Extra': 'yes' }),
    );
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    const call = client.events.list();
    expect(call).toBeInstanceOf(Promise);
    expect(call).toBeInstanceOf(ApiPromise);
    const { data, response, requestId } = await call.withResponse();
    expect(data).toEqual(emptyPage);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-extra')).toBe('yes');
    expect(requestId).toBe('req-9');
    // Awaiting the same call again gives the body, without a second request.
    expect(await call).toEqual(emptyPage);
  });

  it("gives the key's rate limit from the IETF RateLimit fields, here and on errors", async () => {
    let answer = json(200, emptyPage, {
      'RateLimit-Policy': '"default";q=600;w=60',
      RateLimit: '"default";r=599;t=1',
    });
    const { fetch } = fakeFetch(() => answer);
    const client = createClient({
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:9',
      fetch,
      maxRetries: 0,
    });
    const { rateLimit } = await client.events.list().withResponse();
    expect(rateLimit).toEqual({
      policy: 'default',
      remaining: 599,
      resetSeconds: 1,
      quota: 600,
      windowSeconds: 60,
    });

    answer = json(
      429,
      { detail: 'slow down', code: 'RATE_LIMITED', request_id: 'r' },
      {
        'Retry-After': '7',
        'RateLimit-Policy': '"default";q=600;w=60',
        RateLimit: '"default";r=0;t=7',
      },
    );
    const error = (await client.events.list().catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.rateLimit).toMatchObject({ remaining: 0, resetSeconds: 7, quota: 600 });

    // Absent or malformed fields are ignored, as the draft asks.
    answer = json(200, emptyPage, { RateLimit: 'r=5' });
    expect((await client.events.list().withResponse()).rateLimit).toBeNull();
    answer = json(200, emptyPage);
    expect((await client.events.list().withResponse()).rateLimit).toBeNull();
  });

  it('rejects with the same error class as the call itself', async () => {
    const { fetch } = fakeFetch(() =>
      json(404, { detail: 'no such experiment', code: 'NOT_FOUND', request_id: 'r' }),
    );
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    await expect(client.experiments.get(9).withResponse()).rejects.toBeInstanceOf(NotFoundError);
  });

  it('works with Promise.all, finally and catch', async () => {
    const { fetch, calls } = fakeFetch(() => json(200, emptyPage));
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    let finished = false;
    const [a, b] = await Promise.all([
      client.events.list(),
      client.prompts.list().finally(() => (finished = true)),
    ]);
    expect([a, b]).toEqual([emptyPage, emptyPage]);
    expect(finished).toBe(true);
    expect(calls).toHaveLength(2);
  });
});

describe('pagination', () => {
  it('walks every page until the last one', async () => {
    const all = Array.from({ length: 5 }, (_, i) => ({
      timestamp: `2026-01-0${i + 1}T00:00:00.000Z`,
    }));
    // A cursor here is the index of the next item; the real server's are opaque.
    const { fetch, calls } = fakeFetch(({ url }) => {
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const limit = Number(url.searchParams.get('limit'));
      const end = start + limit;
      return json(200, {
        items: all.slice(start, end),
        page: 0,
        page_size: limit,
        total_count: all.length,
        total_pages: Math.ceil(all.length / limit),
        next_cursor: end < all.length ? String(end) : null,
      });
    });
    const client = createClient({ apiKey: 'k', baseUrl: 'http://127.0.0.1:9', fetch });
    const seen = [];
    for await (const event of client.events.iterate({ limit: 2 })) seen.push(event.timestamp);
    expect(seen).toEqual(all.map((e) => e.timestamp));
    expect(calls.map((c) => c.url.searchParams.get('cursor'))).toEqual([null, '2', '4']);
  });
});

describe('identity', () => {
  it('reports the package version in SDK_VERSION and the User-Agent', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const { SDK_VERSION } = await import('../src/index.js');
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
