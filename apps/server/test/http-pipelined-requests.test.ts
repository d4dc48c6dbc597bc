// Requests pipelined on one keep-alive connection, over raw sockets to a real server process: the
// server runs them no faster than the client reads the answers (src/http/pipelined-requests.ts),
// so a client that never reads holds one answer of the process, while one that reads late gets
// every answer, in order, and other connections are served all along.

import { readFileSync, rmSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { dirname } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { insertEventBatch, type EventToImport } from '../src/db/repositories/event-import.js';
import { createFrontDoor } from '../src/http/front-door.js';
import { createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, onSqlite } from './support/test-database.js';

const METRICS_TOKEN = 'metrics-token-for-pipelining';
/** A page of 1,000 events: about 330 KB, more than a socket's buffers take at once. */
const LIST = '/api/v1/events/?limit=1000';
const PIPELINED = 240;
/**
 * What 4 connections that never read may add to the server's RSS: a fraction of the 1,600
 * answers they would make and hold without the bound (docs/reliability.md has both figures), with
 * room for runtimes whose heaps grow further before collecting.
 */
const MEMORY_BOUND_MIB = 128;

let databaseUrl: string;
let db: Db;
let acme: Tenant;
let server: ServerProcess;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  const events = Array.from({ length: 1000 }, (_, i): EventToImport => ({
    importKey: `pipelined-${i}`,
    timestamp: new Date(Date.UTC(2026, 5, 1) + i * 1000).toISOString(),
    sessionId: `s-${i % 97}`,
    conversationId: `c-${i % 41}`,
    source: 'router',
    sourceId: String(i % 50),
    category: 'session',
    type: 'session-started',
    userId: `+1415555${String(i).padStart(4, '0')}`,
    description: `Caller asked about order #${i} and was answered by the support line`,
    attributes: JSON.stringify({ agent_id: i % 40, latency_ms: i % 900 }),
  }));
  await insertEventBatch(db, acme.organizationId, events);
  server = await startServerProcess(
    { DATABASE_URL: databaseUrl, METRICS_TOKEN },
    { keepOutput: false },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.close();
  // A PostgreSQL test database is dropped by the project's global teardown.
  if (onSqlite && databaseUrl) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function request(path: string, requestId?: string): string {
  const id = requestId === undefined ? '' : `X-Request-Id: ${requestId}\r\n`;
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nService-API-Key: ${acme.key}\r\n${id}\r\n`;
}

/** A raw connection to `port`, which reads nothing until told to. */
function connected(port = Number(new URL(server.baseUrl).port)): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Answers with status 200 the server process has counted for `operation`. */
async function answered(operation: string): Promise<number> {
  const metrics = await fetch(`${server.baseUrl}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const line = (await metrics.text())
    .split('\n')
    .find((entry) =>
      entry.startsWith(`agentline_http_requests_total{operation="${operation}",status="200"} `),
    );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function listed(path: string): Promise<{ next_cursor: string | null }> {
  const answer = await fetch(`${server.baseUrl}${path}`, {
    headers: { 'Service-API-Key': acme.key },
  });
  expect(answer.status).toBe(200);
  return (await answer.json()) as { next_cursor: string | null };
}

interface Answer {
  status: number;
  requestId: string | undefined;
  body: string;
}

/** Reads `count` answers with a Content-Length off `socket`, in the order they come. */
function readAnswers(socket: Socket, count: number): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const answers: Answer[] = [];
    let pending: Buffer = Buffer.alloc(0);
    let head: { status: number; requestId: string | undefined; length: number } | undefined;
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (!head) {
          const end = pending.indexOf('\r\n\r\n');
          if (end < 0) return;
          const lines = pending.subarray(0, end).toString('latin1').split('\r\n');
          const header = (name: string) =>
            lines
              .find((line) => line.toLowerCase().startsWith(`${name}:`))
              ?.slice(name.length + 1)
              .trim();
          const length = header('content-length');
          if (length === undefined) {
            reject(new Error(`an answer without Content-Length: ${lines[0]}`));
            socket.destroy();
            return;
          }
          head = {
            status: Number(lines[0]!.split(' ')[1]),
            requestId: header('x-request-id'),
            length: Number(length),
          };
          pending = pending.subarray(end + 4);
        }
        if (pending.length < head.length) return;
        answers.push({
          status: head.status,
          requestId: head.requestId,
          body: pending.subarray(0, head.length).toString(),
        });
        pending = pending.subarray(head.length);
        head = undefined;
        if (answers.length === count) resolve(answers);
      }
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed after ${answers.length} answers`)));
  });
}

/** The kernel's largest send and receive buffers of a TCP socket (Linux autotuning's ceilings). */
function kernelSocketBufferBytes(): number {
  const ceiling = (file: string) =>
    Number(readFileSync(`/proc/sys/net/ipv4/${file}`, 'utf8').trim().split(/\s+/)[2]);
  return ceiling('tcp_wmem') + ceiling('tcp_rmem');
}

/** The process's highest RSS until it has not risen for 2 s (15 s at most). */
async function highestRssMiB(): Promise<number> {
  let highest = server.rssMiB();
  const started = performance.now();
  let stillSince = started;
  while (performance.now() - stillSince < 2_000 && performance.now() - started < 15_000) {
    await sleep(250);
    const now = server.rssMiB();
    if (now > highest + 1) stillSince = performance.now();
    highest = Math.max(highest, now);
  }
  return highest;
}

describe('requests pipelined on one connection', () => {
  it('run no further than an answer its client does not read, while other connections are served', async () => {
    const listsBefore = await answered('events_list');
    const streamsBefore = await answered('events_stream');
    const socket = await connected();
    socket.on('error', () => {});
    // An event stream's answer never ends while it is open: the lists pipelined behind it could
    // only wait in memory, so none may run.
    socket.write(request('/api/v1/events/stream') + request(LIST).repeat(PIPELINED));
    await expect.poll(() => answered('events_stream'), { timeout: 10_000 }).toBe(streamsBefore + 1);

    for (let i = 0; i < 10; i += 1) {
      const other = await fetch(`${server.baseUrl}${LIST}`, {
        headers: { 'Service-API-Key': acme.key },
      });
      expect(other.status).toBe(200);
      await other.arrayBuffer();
    }
    expect(await answered('events_list')).toBe(listsBefore + 10);

    // More requests than the kernel's buffers on both sides can take: the server reads none of
    // them, so they back up in the client.
    const more = request(LIST);
    socket.write(more.repeat(Math.ceil((kernelSocketBufferBytes() + (4 << 20)) / more.length)));
    await sleep(500);
    expect(socket.writableLength).toBeGreaterThan(0);
    expect(await answered('events_list')).toBe(listsBefore + 10);
    socket.destroy();
  });

  it(`answer all ${PIPELINED} requests of a client that reads only once it has sent them, in order`, async () => {
    const socket = await connected();
    const ids = Array.from({ length: PIPELINED }, (_, i) => `pipelined-${i}`);
    socket.write(ids.map((id) => request(LIST, id)).join(''));
    // Long enough for the server to stop reading the connection and wait for its client.
    await sleep(500);
    const answers = await readAnswers(socket, PIPELINED);
    socket.destroy();
    expect(answers.map((answer) => answer.status)).toEqual(ids.map(() => 200));
    expect(answers.map((answer) => answer.requestId)).toEqual(ids);
    for (const answer of answers) {
      expect((JSON.parse(answer.body) as { items: unknown[] }).items).toHaveLength(1000);
    }
  });

  it('hold one answer per connection for clients that pipeline and never read', async () => {
    // A page asked for with a cursor is never kept, so each request makes an answer of its own:
    // without the bound, these connections would make and hold 1,600 answers of 330 KB.
    const { next_cursor: cursor } = await listed('/api/v1/events/?limit=1');
    const page = `/api/v1/events/?limit=1000&cursor=${cursor}`;
    await listed(page);
    const before = server.rssMiB();
    const sockets = await Promise.all(Array.from({ length: 4 }, () => connected()));
    for (const socket of sockets) {
      socket.on('error', () => {});
      socket.write(request(page).repeat(400));
    }
    const highest = await highestRssMiB();
    const health = await fetch(`${server.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    for (const socket of sockets) socket.destroy();
    console.info(
      `4 connections x 400 pipelined pages, never read: RSS ${before.toFixed(0)} -> ${highest.toFixed(0)} MiB`,
    );
    expect(highest - before).toBeLessThan(MEMORY_BOUND_MIB);
  });
});

describe('a request still arriving while its connection waits for its client to read', () => {
  it('is not timed out for the wait, and is answered once the answers before it have gone', async () => {
    let endHold = () => {};
    const door = createFrontDoor({
      fetch: (request) => {
        const path = new URL(request.url).pathname;
        if (path !== '/hold') return Response.json({ path });
        const body = new ReadableStream<Uint8Array>({
          start: (controller) => {
            endHold = () => controller.close();
          },
        });
        // Empty, and open until the test ends it: read as any other answer once it has ended.
        return new Response(body, { headers: { 'Content-Length': '0' } });
      },
      logger: pino({ level: 'silent' }),
      bodyLimitBytes: 1024,
      serverOptions: { headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 50 },
    });
    await new Promise<void>((resolve) => door.listen(0, '127.0.0.1', resolve));
    try {
      const socket = await connected((door.address() as AddressInfo).port);
      const plain = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
      // /a waits behind /hold, so the connection is not read, and /b has not all arrived.
      socket.write(`${plain('/hold')}\r\n${plain('/a')}\r\n${plain('/b')}`);
      const answers = readAnswers(socket, 3);
      // Past both of /b's timeouts (its headers 300 ms, all of it 600 ms, checked every 50 ms).
      await sleep(1_000);
      socket.write('\r\n');
      endHold();
      const [held, first, second] = await answers;
      socket.destroy();
      expect([held!.status, first!.status, second!.status]).toEqual([200, 200, 200]);
      expect([first!.body, second!.body]).toEqual(['{"path":"/a"}', '{"path":"/b"}']);
    } finally {
      door.closeAllConnections();
      door.close();
    }
  });
});
