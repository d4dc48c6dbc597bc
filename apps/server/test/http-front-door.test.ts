// The server's front door over raw sockets: a client still writing a large body can
// read an answer given before the body was read (lingering close), and every answer the server
// gives on its own, before the app, is a JSON error with a request id and a log line.

import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createFrontDoor, type FrontDoorOptions } from '../src/http/front-door.js';
import { createTenant, type Tenant } from './support/harness.js';
import { anyString } from './support/matchers.js';
import { createTestDb } from './support/test-database.js';
import type { Db } from '../src/db/engine/client.js';

let db: Db;
let acme: Tenant;
const logLines: Array<Record<string, unknown>> = [];
const logger = pino(
  { level: 'info' },
  { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
);
const servers: Array<ReturnType<typeof createFrontDoor>> = [];

/** The app behind a front door of its own on 127.0.0.1; resolves with its port. */
async function start(
  options: Partial<FrontDoorOptions> & { bodyLimitBytes?: number } = {},
): Promise<number> {
  const bodyLimitBytes = options.bodyLimitBytes ?? 1024 * 1024;
  const app = createApp({ db, bodyLimitBytes });
  const server = createFrontDoor({
    fetch: app.fetch,
    logger,
    bodyLimitBytes,
    hostname: '127.0.0.1',
    ...options,
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  db = await createTestDb();
  acme = await createTenant(db, 'Acme');
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await db.close();
});

interface Exchange {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** The client's socket error, if any (EPIPE, ECONNRESET). */
  error: string | undefined;
  /** Body bytes written before the connection closed. */
  written: number;
}

interface ExchangeOptions {
  head: string;
  /** Body bytes to write after the head, 16 KiB every `delayMs`. */
  bodyBytes?: number;
  delayMs?: number;
  chunked?: boolean;
  /** Read only once the whole body is written, as many simple clients do. */
  readLate?: boolean;
}

/** One request over a raw socket; resolves once the server closes or 1.5 s after the last write. */
function exchange(port: number, options: ExchangeOptions): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    let written = 0;
    const total = options.bodyBytes ?? 0;
    const chunk = Buffer.alloc(16 * 1024, 'a');
    const onData = (data: Buffer) => (text += data.toString('latin1'));
    if (!options.readLate) socket.on('data', onData);
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code));
    socket.on('close', () => resolve({ text, error, written }));
    socket.write(options.head);
    const writeMore = () => {
      if (socket.destroyed) return;
      if (written >= total) {
        if (options.chunked) socket.write('0\r\n\r\n');
        if (options.readLate) socket.on('data', onData);
        setTimeout(() => socket.end(), 1500);
        return;
      }
      const part = chunk.subarray(0, Math.min(chunk.length, total - written));
      if (options.chunked) socket.write(`${part.length.toString(16)}\r\n`);
      socket.write(part);
      if (options.chunked) socket.write('\r\n');
      written += part.length;
      setTimeout(writeMore, options.delayMs ?? 0);
    };
    writeMore();
  });
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP/1.1 answers in what a server sent (bodies with Content-Length only). */
function answersIn(text: string): Answer[] {
  const answers: Answer[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd === -1) break;
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const length = Number(headers['content-length'] ?? 0);
    const body = rest.slice(headEnd + 4, headEnd + 4 + length);
    if (Buffer.byteLength(body, 'latin1') < length) break;
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body });
    rest = rest.slice(headEnd + 4 + length);
  }
  return answers;
}

/** Checks a JSON error answer and returns its parsed body. */
function expectJsonError(answer: Answer | undefined, status: number, code: string) {
  expect(answer?.status).toBe(status);
  expect(answer?.headers['content-type']).toBe('application/json');
  const body = JSON.parse(answer!.body) as { detail: string; code: string; request_id: string };
  expect(body).toEqual({ detail: anyString(), code, request_id: anyString() });
  expect(answer?.headers['x-request-id']).toBe(body.request_id);
  expect(answer?.headers['x-content-type-options']).toBe('nosniff');
  return body;
}

const post = (path: string, headers: string) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}\r\n`;

describe('lingering close: a client still writing its body reads an early answer', () => {
  let port: number;
  let smallLimitPort: number;
  const SMALL_LIMIT = 256 * 1024;

  beforeAll(async () => {
    port = await start();
    smallLimitPort = await start({ bodyLimitBytes: SMALL_LIMIT });
  });

  // 900 KB at 16 KiB every 20 ms: about a second of writing, well past the moment of the answer
  // (before lingering close the connection was closed 500 ms after it, and reset).
  it('reads the whole 401 of a 900 KB body without a key, also when reading only afterwards', async () => {
    const runs = await Promise.all(
      [false, true, false, true].map((readLate, i) =>
        exchange(port, {
          head: post(
            '/api/v1/experiments/',
            `Content-Length: 900000\r\n${i >= 2 ? 'Connection: close\r\n' : ''}`,
          ),
          bodyBytes: 900_000,
          delayMs: 20,
          readLate,
        }),
      ),
    );
    for (const run of runs) {
      expect(run.error).toBeUndefined();
      expect(run.written).toBe(900_000);
      const [answer] = answersIn(run.text);
      expectJsonError(answer, 401, 'UNAUTHENTICATED');
    }
  });

  it('reads the 413 of a streamed body that grows past the limit, when reading only afterwards', async () => {
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        exchange(smallLimitPort, {
          head: post(
            '/api/v1/experiments/',
            `Service-API-Key: ${acme.key}\r\nTransfer-Encoding: chunked\r\n`,
          ),
          bodyBytes: SMALL_LIMIT + 200_000,
          chunked: true,
          delayMs: 20,
          readLate: true,
        }),
      ),
    );
    for (const run of runs) {
      expect(run.error).toBeUndefined();
      expectJsonError(answersIn(run.text)[0], 413, 'PAYLOAD_TOO_LARGE');
    }
  });

  it('cuts off a body that goes on past the limit after the 413 was written', async () => {
    const run = await exchange(smallLimitPort, {
      head: post(
        '/api/v1/experiments/',
        `Service-API-Key: ${acme.key}\r\nContent-Length: ${8 * SMALL_LIMIT}\r\n`,
      ),
      bodyBytes: 8 * SMALL_LIMIT,
      delayMs: 5,
    });
    expectJsonError(answersIn(run.text)[0], 413, 'PAYLOAD_TOO_LARGE');
    // Drained up to the limit (and what was in flight), not the whole body.
    expect(run.written).toBeLessThan(4 * SMALL_LIMIT);
  });

  it('says Connection: close, and closes without a reset once the body is drained', async () => {
    const run = await exchange(port, {
      head: post('/api/v1/experiments/', 'Content-Length: 300000\r\n'),
      bodyBytes: 300_000,
      delayMs: 10,
      readLate: true,
    });
    const answers = answersIn(run.text);
    expect(answers).toHaveLength(1);
    expectJsonError(answers[0], 401, 'UNAUTHENTICATED');
    expect(answers[0]?.headers.connection).toBe('close');
    expect(run).toMatchObject({ error: undefined, written: 300_000 });
  });

  // The front door's own refusals and the adapter's (a request it cannot build) decide the same
  // way as the app's answers: each is written while the body is still arriving.
  it.each([
    [
      'without Host (the front door)',
      (length: string) =>
        `POST /api/v1/experiments/ HTTP/1.1\r\nContent-Type: application/json\r\n${length}\r\n`,
      400,
    ],
    [
      'with a backslash in the path (the adapter)',
      (length: string) => post('/api/v1\\experiments/', length),
      400,
    ],
    [
      'with an Expect other than 100-continue',
      (length: string) => post('/api/v1/experiments/', `Expect: 200-ok\r\n${length}`),
      417,
    ],
  ])(
    'says Connection: close to a request refused %s before its body arrived',
    async (_, head, status) => {
      const run = await exchange(port, {
        head: head('Content-Length: 300000\r\n'),
        bodyBytes: 300_000,
        delayMs: 10,
        readLate: true,
      });
      const answers = answersIn(run.text);
      expect(answers).toHaveLength(1);
      expect(answers[0]?.status).toBe(status);
      expect(answers[0]?.headers.connection).toBe('close');
      expect(run.error).toBeUndefined();
    },
  );

  it('keeps the connection of a request whose body was read before the answer', async () => {
    const body = '{}';
    const run = await exchange(port, {
      head:
        post('/api/v1/experiments/', `Service-API-Key: ${acme.key}\r\nContent-Length: 2\r\n`) +
        body +
        'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    });
    const [invalid, health] = answersIn(run.text);
    expect(invalid?.status).toBe(422);
    expect(invalid?.headers.connection).toBe('keep-alive');
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });

  it('cuts off a body that is still arriving when the linger time is up', async () => {
    const lingerPort = await start({ lingerMs: 300 });
    const started = performance.now();
    const run = await exchange(lingerPort, {
      head: post('/api/v1/experiments/', 'Content-Length: 900000\r\n'),
      bodyBytes: 900_000,
      delayMs: 50,
    });
    expectJsonError(answersIn(run.text)[0], 401, 'UNAUTHENTICATED');
    expect(run.written).toBeLessThan(900_000);
    expect(performance.now() - started).toBeLessThan(2_500);
  });
});

describe('answers the server gives before the app', () => {
  let port: number;

  beforeAll(async () => {
    port = await start({
      serverOptions: {
        headersTimeout: 1_000,
        requestTimeout: 2_000,
        connectionsCheckingInterval: 250,
      },
    });
  });

  const logged = (requestId: string) =>
    logLines.find(
      (line) => line.request_id === requestId && line.msg === 'request refused before the app',
    );

  const get = (headers: string, target = '/healthz') =>
    `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`;

  it.each([
    [
      'a Host the URL parser rewrites',
      get('Host: [::ffff:127.0.0.1]:8080\r\nX-Request-Id: probe-1\r\n'),
      400,
    ],
    ['a Host with a space', get('Host: a b\r\nX-Request-Id: probe-2\r\n'), 400],
    [
      'a backslash in the path',
      get('Host: 127.0.0.1\r\nX-Request-Id: probe-3\r\n', '/api/v1\\events/'),
      400,
    ],
    ['HTTP/1.1 without Host', get('X-Request-Id: probe-4\r\n'), 400],
    [
      'an Expect other than 100-continue',
      get('Host: x\r\nExpect: 200-ok\r\nX-Request-Id: probe-5\r\n'),
      417,
    ],
    [
      'CONNECT',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: probe-6\r\n\r\n',
      400,
    ],
  ])('%s is a JSON error that echoes X-Request-Id, and is logged', async (_, head, status) => {
    const run = await exchange(port, { head });
    const body = expectJsonError(answersIn(run.text)[0], status, 'BAD_REQUEST');
    expect(body.request_id).toMatch(/^probe-\d$/);
    expect(logged(body.request_id)).toMatchObject({ level: 30, status });
  });

  it.each([
    ['a header line without a colon', get('Host: x\r\nBad Header\r\n'), 400, 'BAD_REQUEST'],
    ['a space before a colon', get('Host: x\r\nX-Thing : 1\r\n'), 400, 'BAD_REQUEST'],
    ['an unknown method', 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'BAD_REQUEST'],
    [
      'Content-Length beside chunked',
      'POST /api/v1/events/ HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
      400,
      'BAD_REQUEST',
    ],
    [
      'headers over 16 KiB',
      get(`Host: x\r\nX-Padding: ${'x'.repeat(20_000)}\r\n`),
      431,
      'BAD_REQUEST',
    ],
  ])(
    '%s (unparsable) is a JSON error with a new request id, and is logged',
    async (_, head, status, code) => {
      const run = await exchange(port, { head });
      const body = expectJsonError(answersIn(run.text)[0], status, code);
      expect(logged(body.request_id)).toMatchObject({ level: 30, status });
    },
  );

  it('HTTP/1.0 without Host is still served (load balancers check health this way)', async () => {
    const run = await exchange(port, { head: 'GET /healthz HTTP/1.0\r\n\r\n' });
    expect(answersIn(run.text)[0]).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });

  it('headers that never end are a JSON 408 once the headers timeout passes', async () => {
    const run = await exchange(port, { head: 'GET /healthz HTTP/1.1\r\nHost: x\r\n' });
    const body = expectJsonError(answersIn(run.text)[0], 408, 'REQUEST_TIMEOUT');
    expect(logged(body.request_id)).toMatchObject({ status: 408 });
  });

  it('a body that never ends after an early answer is not given a second answer', async () => {
    // The 401 comes at once; the request timeout (1 s here) then passes while it lingers.
    const lingerPort = await start({
      lingerMs: 5_000,
      serverOptions: {
        headersTimeout: 500,
        requestTimeout: 1_000,
        connectionsCheckingInterval: 250,
      },
    });
    const run = await exchange(lingerPort, {
      head: post('/api/v1/experiments/', 'Content-Length: 900000\r\n'),
      bodyBytes: 200_000,
      delayMs: 20,
    });
    const answers = answersIn(run.text);
    expect(answers).toHaveLength(1);
    expectJsonError(answers[0], 401, 'UNAUTHENTICATED');
    expect(run.text.indexOf('HTTP/1.1', 1)).toBe(-1);
  });
});
