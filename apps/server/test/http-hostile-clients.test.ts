// Hostile and careless clients, each case over a real socket: no request may stall the server or
// crash it, and every body gets a clear answer. One test (or group) per finding of the hardening
// issue; the database cases run on both backends.

import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { authenticateApiKey } from '../src/use-cases/authentication.js';
import { Metrics } from '../src/http/metrics.js';
import { MAX_JSON_DEPTH } from '../src/http/json-body.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { anyString, stringContaining } from './support/matchers.js';
import { sendRaw, startLiveServer, type LiveServer } from './support/live-server.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl } from './support/test-database.js';
import { runTempFolder } from './support/run-temp-dir.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';

const execFileAsync = promisify(execFile);

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;
let server: LiveServer;
const logLines: Array<Record<string, unknown>> = [];
const metrics = new Metrics();

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  server = await startLiveServer(createApp({ db: api.db, logger, metrics }));
});

afterAll(async () => {
  await server.close();
  await api.close();
});

const sessionsPath = () => `/api/v1/channels/targets/${fx.targets.main}/sessions`;

/** A JSON POST with the tenant's key and an exact Content-Length; `T` is the body expected. */
function postJson<T>(path: string, body: string, headers: Record<string, string> = {}) {
  return sendRaw<T>(server.baseUrl, {
    path,
    chunks: [body],
    headers: {
      'Service-API-Key': acme.key,
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      ...headers,
    },
  });
}

async function sessionCount() {
  const res = await api.request<Schemas['EventListResponse']>('GET', '/api/v1/events/?limit=0', {
    key: acme.key,
  });
  return res.body.total_count;
}

// 150 runs of 3,000 nested brackets and an escaped backslash before "u0000": about 900 KB that
// once made the NUL check parse and walk the body before authentication.
const heavy = `{"a":[${Array.from({ length: 150 }, () => '['.repeat(3000) + ']'.repeat(3000)).join(',')},"\\\\u0000"]}`;

/** How long this process takes to JSON.parse the heavy body, the median of three. */
function parseMs(): number {
  const times = Array.from({ length: 3 }, () => {
    const started = performance.now();
    JSON.parse(heavy);
    return performance.now() - started;
  });
  return times.sort((a, b) => a - b)[1]!;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe('1. a heavy body without a key', () => {
  let separate: ServerProcess;

  // The server runs in a process of its own, so the test's writing of the body does not share
  // its event loop.
  beforeAll(async () => {
    separate = await startServerProcess({ DATABASE_URL: await freshDatabaseUrl() });
  }, 60_000);

  afterAll(() => separate?.stop());

  it('is refused with 401 before a parse of it could end, while /healthz stays quick', async () => {
    expect(heavy.length).toBeGreaterThan(850_000);
    const bodyFile = join(runTempFolder('agentline-heavy-'), 'body.json');
    writeFileSync(bodyFile, heavy);
    // The client's own first fetch loads and connects its HTTP stack: not the server's time.
    await fetch(`${separate.baseUrl}/healthz`);
    // The machine's own delay now (other processes share its cores), which the attack adds to.
    const quiet = await timed(() => fetch(`${separate.baseUrl}/healthz`));
    // The attacker is a process of its own (curl), so only the server's time is measured.
    const post = (path: string) =>
      execFileAsync('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %{time_total}',
        '-H',
        'Content-Type: application/json',
        '--data-binary',
        `@${bodyFile}`,
        `${separate.baseUrl}${path}`,
      ]).then(({ stdout }) => {
        const [status, seconds] = stdout.split(' ');
        return { status, ms: Number(seconds) * 1000 };
      });
    // Sending the body to a path that reads none of it: curl's start and the upload on this
    // machine now, which the refusal adds to.
    const unread = await post('/healthz');
    const attacker = post('/api/v1/experiments/');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const healthz = await timed(() => fetch(`${separate.baseUrl}/healthz`));
    const refused = await attacker;
    expect(refused.status).toBe('401');
    expect(healthz.value.status).toBe(200);
    // Parsing the body before authentication would hold the event loop for it, at least as long
    // as JSON.parse alone takes here. CI's test workers share the cores, which stretches a quiet
    // answer too, so each bound is 100 ms or half this machine's parse of the body now, whichever
    // is more, past the same request's time without the attack: the body sent where nothing
    // reads it, and a /healthz before.
    const margin = Math.max(100, parseMs() / 2);
    expect(refused.ms).toBeLessThan(margin + unread.ms);
    expect(healthz.ms).toBeLessThan(margin + quiet.ms);
  });
});

describe('2. deep nesting', () => {
  const deep = (levels: number, inner = '"\\u0000"') =>
    `{"a":${'['.repeat(levels)}${inner}${']'.repeat(levels)}}`;

  it('is a 422 at the level where the limit is crossed, not a 500', async () => {
    const res = await postJson<Schemas['HTTPValidationError']>('/api/v1/experiments/', deep(8000));
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'a', ...Array<number>(MAX_JSON_DEPTH - 1).fill(0)],
        msg: stringContaining(`deeper than ${MAX_JSON_DEPTH} levels`),
        type: 'value_error',
      },
    ]);
  });

  it('up to the limit is read as usual (here: the route validates the body)', async () => {
    const res = await postJson<Schemas['HTTPValidationError']>(
      '/api/v1/experiments/',
      deep(MAX_JSON_DEPTH - 2, '1'),
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.msg).not.toContain('deeper than');
  });

  it('without a key is a 401: nothing of the body is looked at', async () => {
    const res = await sendRaw(server.baseUrl, {
      path: sessionsPath(),
      chunks: [deep(8000)],
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(401);
  });
});

describe('3. failed authentications per client address', () => {
  let limited: LiveServer;

  beforeAll(async () => {
    limited = await startLiveServer(
      createApp({
        db: api.db,
        authFailureLimit: { perMinute: 5, trustedProxies: new Set(['127.0.0.1']) },
      }),
    );
  });

  afterAll(() => limited.close());

  const attempt = (key: string, forwardedFor: string, chunks: string[] = []) =>
    sendRaw<Schemas['ErrorResponse']>(limited.baseUrl, {
      method: chunks.length ? 'POST' : 'GET',
      path: chunks.length ? sessionsPath() : '/api/v1/events/?limit=0',
      chunks,
      headers: {
        'Service-API-Key': key,
        'X-Forwarded-For': forwardedFor,
        ...(chunks.length ? { 'Content-Type': 'application/json' } : {}),
      },
    });

  it('answers 429 with Retry-After once an address has used up its failures', async () => {
    const unknownKey = `agl_${'x'.repeat(12)}_${'y'.repeat(32)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await attempt(unknownKey, '203.0.113.5')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const blocked = await attempt('', '203.0.113.5', ['{"user_id": "a"}']);
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A valid key at that address is served all the same, and another client
    // behind the same trusted proxy is not held up by the first one.
    expect((await attempt(acme.key, '203.0.113.5', ['{"user_id": "a"}'])).status).toBe(200);
    expect((await attempt('', '203.0.113.6')).status).toBe(401);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const untrusted = await startLiveServer(
      createApp({ db: api.db, authFailureLimit: { perMinute: 2, trustedProxies: new Set() } }),
    );
    try {
      const statuses: number[] = [];
      for (const forwardedFor of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
        const res = await sendRaw(untrusted.baseUrl, {
          method: 'GET',
          path: '/api/v1/events/',
          headers: { 'Service-API-Key': 'wrong', 'X-Forwarded-For': forwardedFor },
        });
        statuses.push(res.status);
      }
      // A spoofed header does not buy a fresh budget: the socket's address counts.
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await untrusted.close();
    }
  });
});

describe('4 and 5. media types of bodies', () => {
  const session = JSON.stringify({ user_id: '+14155550123' });

  it.each([
    ['no Content-Type', {}],
    ['text/plain', { 'Content-Type': 'text/plain' }],
    ['a form', { 'Content-Type': 'application/x-www-form-urlencoded' }],
    ['UTF-16', { 'Content-Type': 'application/json; charset=utf-16' }],
    [
      'a gzip label on a plain body',
      { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    ],
  ])('%s is a 415 and stores nothing', async (_, headers: Record<string, string>) => {
    const before = await sessionCount();
    const res = await sendRaw<Schemas['ErrorResponse']>(server.baseUrl, {
      path: sessionsPath(),
      chunks: [session],
      headers: { 'Service-API-Key': acme.key, ...headers },
    });
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', detail: anyString() });
    expect(await sessionCount()).toBe(before);
  });

  it('a gzip body is a 415, not a misleading json_invalid', async () => {
    const res = await sendRaw<Schemas['ErrorResponse']>(server.baseUrl, {
      path: sessionsPath(),
      chunks: [gzipSync(session)],
      headers: {
        'Service-API-Key': acme.key,
        'Content-Type': 'application/json',
        'Content-Encoding': 'gzip',
      },
    });
    expect(res.status).toBe(415);
    expect(res.body.detail).toContain('gzip');
  });

  it('an experiment without Content-Type is a 415, not "name is required"', async () => {
    const body = JSON.stringify(
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    );
    const res = await sendRaw(server.baseUrl, {
      path: '/api/v1/experiments/',
      chunks: [body],
      headers: { 'Service-API-Key': acme.key },
    });
    expect(res.status).toBe(415);
  });

  it('JSON with charset=utf-8 and identity encoding is routed with its user_id', async () => {
    const res = await postJson<Schemas['RoutedSession']>(sessionsPath(), session, {
      'Content-Type': 'application/json; charset=UTF-8',
      'Content-Encoding': 'identity',
    });
    expect(res.status).toBe(200);
    const events = await api.request<Schemas['EventListResponse']>(
      'GET',
      `/api/v1/events/?search_fields=session_id&search_field_values=${res.body.session_id}`,
      { key: acme.key },
    );
    expect(events.body.items[0]?.user_id).toBe('+14155550123');
  });

  it('a session may still be routed with no body and no Content-Type (its body is optional)', async () => {
    const res = await sendRaw(server.baseUrl, {
      path: sessionsPath(),
      headers: { 'Service-API-Key': acme.key },
    });
    expect(res.status).toBe(200);
  });

  it('operations without a body ignore the Content-Type', async () => {
    const draft = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    const res = await sendRaw(server.baseUrl, {
      method: 'DELETE',
      path: `/api/v1/experiments/${draft.body.id}`,
      headers: { 'Service-API-Key': acme.key, 'Content-Type': 'text/plain' },
    });
    expect(res.status).toBe(200);
  });
});

describe('6. a client that disconnects in the middle of its body', () => {
  it('is logged at info as a client abort and is no 5xx in the metrics', async () => {
    const { port } = new URL(server.baseUrl);
    const socket = new Socket();
    await new Promise<void>((resolve) => socket.connect(Number(port), '127.0.0.1', resolve));
    socket.write(
      `POST ${sessionsPath()} HTTP/1.1\r\nHost: 127.0.0.1\r\nService-API-Key: ${acme.key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user_id": "half',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    await expect
      .poll(() => logLines.find((line) => String(line.msg).includes('client closed')), {
        timeout: 5000,
      })
      .toMatchObject({ level: 30 });
    expect(logLines.filter((line) => (line.level as number) >= 50)).toEqual([]);
    expect(metrics.render()).not.toMatch(/status="5\d\d"/);
  });
});

describe('8. lone surrogates', () => {
  it('in a body string is a 422 naming the field, and nothing is created', async () => {
    const body = JSON.stringify(
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    ).replace('"name":"', '"name":"\\ud800');
    const res = await postJson<Schemas['HTTPValidationError']>('/api/v1/experiments/', body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      {
        loc: ['body', 'name'],
        msg: stringContaining('lone surrogate'),
        type: 'value_error',
      },
    ]);
    const list = await api.request<Schemas['ExperimentListResponse']>(
      'GET',
      '/api/v1/experiments/?search_fields=name&search_field_values=Shorter',
      { key: acme.key },
    );
    expect(list.body.items.filter((e) => e.name!.includes('\ufffd'))).toEqual([]);
  });

  it('in a routed session user_id (a low surrogate alone) is a 422, and no session is stored', async () => {
    const before = await sessionCount();
    const res = await postJson<Schemas['HTTPValidationError']>(
      sessionsPath(),
      '{"user_id": "caller\\udc00"}',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'user_id'], type: 'value_error' });
    expect(await sessionCount()).toBe(before);
  });

  it('a well-formed pair (an emoji) is ordinary text', async () => {
    const res = await postJson(sessionsPath(), '{"user_id": "caller \\ud83d\\ude00"}');
    expect(res.status).toBe(200);
  });
});

describe('9. messages that name the offending value', () => {
  it('?fields=bogus names "bogus" and the field', async () => {
    const res = await api.request<Schemas['HTTPValidationError']>(
      'GET',
      '/api/v1/events/?fields=bogus',
      { key: acme.key },
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['query', 'fields', 0]);
    expect(res.body.detail[0]?.msg).toMatch(
      /^"bogus" is not allowed in fields\[0\]; it must be one of: /,
    );
  });

  it('?fields= (empty) means every field, as the spec says', async () => {
    await api.request('POST', sessionsPath(), { key: acme.key, body: { user_id: 'empty-fields' } });
    const res = await api.request<Schemas['EventListResponse']>(
      'GET',
      '/api/v1/events/?fields=&limit=1',
      { key: acme.key },
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.items[0]!).length).toBeGreaterThan(5);
  });

  it('an empty Idempotency-Key is too short, not too long', async () => {
    const res = await api.request<Schemas['HTTPValidationError']>('POST', sessionsPath(), {
      key: acme.key,
      body: {},
      headers: { 'Idempotency-Key': '' },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['header', 'Idempotency-Key'],
      type: 'string_too_short',
    });
  });
});

describe('10. refusing an unknown key id and a wrong secret', () => {
  it('hashes and compares once in both cases, against a stored-size hash', async () => {
    const known = acme.key.slice(0, 'agl_'.length + 12);
    const calls: Array<{ hashLength: number }> = [];
    const counting = (secret: string, hash: string) => {
      calls.push({ hashLength: hash.length });
      return false;
    };
    expect(await authenticateApiKey(api.db, `${known}_${'W'.repeat(32)}`, counting)).toBeNull();
    expect(
      await authenticateApiKey(api.db, `agl_${'z'.repeat(12)}_${'W'.repeat(32)}`, counting),
    ).toBeNull();
    expect(calls).toEqual([{ hashLength: 64 }, { hashLength: 64 }]);
  });
});
