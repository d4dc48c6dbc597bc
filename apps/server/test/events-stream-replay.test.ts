// A long replay of GET /api/v1/events/stream through a real server process: it goes at the pace
// of its client, leaves the process's other requests their turn, and holds no more memory than
// its buffer. AGENTLINE_TEST_REPLAY_EVENTS sets how many events are replayed (200,000 by default).

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/engine/migrate.js';
import { insertEventBatch, type EventToImport } from '../src/db/repositories/event-import.js';
import { createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, onSqlite } from './support/test-database.js';

/** What a replay may add to /healthz's p99 and max here: far below the stall of a blocking one. */
const STALL_P99_MS = 150;
const STALL_MAX_MS = 500;
const REPLAY_EVENTS = Number(process.env['AGENTLINE_TEST_REPLAY_EVENTS'] ?? 200_000);
const BUFFER_BYTES = 1024 * 1024;
const IDLE_STREAMS = 100;
/** /healthz asked this many times beside the idle replays. */
const HEALTH_CHECKS = 5;
/**
 * Measured above the streams' buffers: 110-280 MiB on Node 20 and 22, 450-580 on Node 24 (its
 * heaps grow further before collecting; a CI run saw 580). Far below a replay without
 * backpressure (3.1 GB for these 100 streams), which is what this bound is there to catch.
 */
const FIXED_BASE_MIB = 1024;
const FROM_THE_START = 'start_datetime=2000-01-01T00:00:00Z';

let databaseUrl: string;
let db: Db;
let acme: Tenant;
let server: ServerProcess;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  const timestamp = '2026-06-01T00:00:00.000Z';
  for (let start = 0; start < REPLAY_EVENTS; start += 10_000) {
    const batch = Array.from(
      { length: Math.min(10_000, REPLAY_EVENTS - start) },
      (_, i): EventToImport => ({
        importKey: `replay-${start + i}`,
        timestamp,
        sessionId: `s-${(start + i) % 97}`,
        conversationId: null,
        source: 'replay',
        sourceId: null,
        category: 'replay',
        type: 'replayed',
        userId: null,
        description: `replayed event number ${start + i}`,
        attributes: JSON.stringify({ n: start + i }),
      }),
    );
    await insertEventBatch(db, acme.organizationId, batch);
  }
  server = await startServerProcess(
    {
      DATABASE_URL: databaseUrl,
      EVENT_STREAMS_PER_KEY: String(IDLE_STREAMS + 10),
      EVENT_STREAM_BUFFER_BYTES: String(BUFFER_BYTES),
    },
    { keepOutput: false },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.close();
  // A PostgreSQL test database is dropped by the project's global teardown.
  if (onSqlite && databaseUrl) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

/**
 * GET /healthz one after the other on a thread of its own, so that the times measured are the
 * server's, not this thread's, which parses the stream meanwhile.
 */
function healthzLoop(baseUrl: string): { started: Promise<void>; stop(): Promise<number[]> } {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    let stopping = false;
    let times = [];
    parentPort.on('message', () => (stopping = true));
    (async () => {
      for (let warm = 0; warm < 20; warm += 1) await (await fetch(workerData.url)).arrayBuffer();
      parentPort.postMessage({ started: true });
      while (!stopping) {
        const began = performance.now();
        const answer = await fetch(workerData.url);
        await answer.arrayBuffer();
        if (answer.status !== 200) throw new Error('healthz answered ' + answer.status);
        times.push(performance.now() - began);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      parentPort.postMessage({ times });
    })();
    `,
    { eval: true, workerData: { url: `${baseUrl}/healthz` } },
  );
  const started = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  return {
    started,
    stop: async () => {
      const done = new Promise<number[]>((resolve, reject) => {
        worker.on('message', (message: { times?: number[] }) => {
          if (message.times) resolve(message.times);
        });
        worker.once('error', reject);
      });
      worker.postMessage('stop');
      const times = await done;
      await worker.terminate();
      return times;
    },
  };
}

function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

interface ReplayRead {
  /** attributes.n of each event, in the order received. */
  numbers: number[];
  ids: Set<string>;
  errors: string[];
}

/** Reads the stream as fast as it comes until `count` events arrived, parsing only what it checks. */
async function readReplay(response: Response, count: number): Promise<ReplayRead> {
  const read: ReplayRead = { numbers: [], ids: new Set(), errors: [] };
  const decoder = new TextDecoder();
  let pending = '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  while (read.numbers.length < count && read.errors.length === 0) {
    const { done, value } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    const messages = pending.split('\n\n');
    pending = messages.pop()!;
    for (const message of messages) {
      if (message.startsWith(':')) continue;
      if (message.includes('event: error')) {
        read.errors.push(message);
        continue;
      }
      read.ids.add(/^id: (.*)$/m.exec(message)![1]!);
      read.numbers.push(Number(/"n":(\d+)/.exec(message)![1]));
    }
  }
  await reader.cancel();
  return read;
}

function openStream(query: string): Promise<Response> {
  return fetch(`${server.baseUrl}/api/v1/events/stream?${query}`, {
    headers: { 'Service-API-Key': acme.key },
  });
}

describe(`a replay of ${REPLAY_EVENTS} events`, () => {
  it('holds no more than its buffer for each of 100 streams that do not read', async () => {
    const before = server.rssMiB();
    const streams = await Promise.all(
      Array.from({ length: IDLE_STREAMS }, () => openStream(FROM_THE_START)),
    );
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
    // Until the replays stop, their buffers full: the process's memory stops growing.
    let highest = server.rssMiB();
    for (let still = 0; still < 10;) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const now = server.rssMiB();
      still = now > highest + 1 ? 0 : still + 1;
      highest = Math.max(highest, now);
    }
    // Several in turn, held by their median: a replay that kept the process busy slows every one,
    // while one request of a loaded CI machine (two suites side by side) took 1.1 s on its own.
    const healthMs: number[] = [];
    for (let i = 0; i < HEALTH_CHECKS; i += 1) {
      const began = performance.now();
      const health = await fetch(`${server.baseUrl}/healthz`);
      await health.arrayBuffer();
      healthMs.push(performance.now() - began);
      expect(health.status).toBe(200);
    }
    const buffers = (IDLE_STREAMS * BUFFER_BYTES) / 1024 / 1024;
    console.info(
      `${IDLE_STREAMS} idle replays: RSS ${before.toFixed(0)} MiB before, ${highest.toFixed(0)} MiB with them (their buffers: ${buffers} MiB); /healthz ${healthMs.map((ms) => ms.toFixed(1)).join(', ')} ms`,
    );
    expect(
      percentile(
        [...healthMs].sort((a, b) => a - b),
        0.5,
      ),
    ).toBeLessThan(1000);
    // What does not grow with the streams: SQLite's reader threads and their page caches, and
    // what the collector has not yet taken back of the events encoded into the kernel's socket
    // buffers (tens of MB per stream on loopback) before the buffers filled.
    expect(highest).toBeLessThan(before + buffers + FIXED_BASE_MIB);
    for (const stream of streams) await stream.body!.cancel();
  }, 60_000);

  // /healthz is held to bounds a replay that blocks the process breaks (a 141,000-event replay
  // froze it for 1.1 s), not to the quiet machine's figures (p99 under 20 ms, max under 100 ms
  // beside the replay; docs/reliability.md), which other test files' servers starting beside this
  // one on two cores would make a coin toss. The figures are printed on every run.
  it('reaches a fast reader whole and in order while /healthz stays quick', async () => {
    // The machine's own delays first (other processes share its cores): the replay is held to
    // what it adds to them.
    const control = healthzLoop(server.baseUrl);
    await control.started;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const quiet = (await control.stop()).sort((a, b) => a - b);
    const quietP99 = percentile(quiet, 0.99);
    const quietMax = quiet.at(-1)!;
    const health = healthzLoop(server.baseUrl);
    await health.started;
    const began = performance.now();
    const response = await openStream(FROM_THE_START);
    expect(response.status).toBe(200);
    const read = await readReplay(response, REPLAY_EVENTS);
    const seconds = (performance.now() - began) / 1000;
    const times = (await health.stop()).sort((a, b) => a - b);
    const p99 = percentile(times, 0.99);
    const max = times.at(-1)!;
    console.info(
      `replay of ${read.numbers.length} events in ${seconds.toFixed(1)} s; /healthz: ${times.length} answers, p50 ${percentile(times, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms (without the replay: p50 ${percentile(quiet, 0.5).toFixed(1)} ms, p99 ${quietP99.toFixed(1)} ms, max ${quietMax.toFixed(1)} ms)`,
    );
    expect(read.errors).toEqual([]);
    expect(read.numbers).toHaveLength(REPLAY_EVENTS);
    // Exactly once and in order: the n-th event received is the n-th written.
    expect(read.numbers.findIndex((number, index) => number !== index)).toBe(-1);
    expect(read.ids.size).toBe(REPLAY_EVENTS);
    expect(p99).toBeLessThan(STALL_P99_MS + quietP99);
    expect(max).toBeLessThan(STALL_MAX_MS + quietMax);
  }, 90_000);
});
