// A long replay of GET /api/v1/events/stream through a real server process: it goes at the pace
// of its client, leaves the process's other requests their turn, and holds no more memory than
// its buffer. AGENTLINE_TEST_REPLAY_EVENTS sets how many events are replayed (200,000 by default).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { insertEventBatch } from '../src/db/repositories/event-import.js';
import { createTenant, type Tenant } from './support/harness.js';
import { healthzLoop, percentile, readReplay, replayedEvent } from './support/replay-clients.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { createSharedTestDb, type SharedTestDb } from './support/test-database.js';

/**
 * What a replay may add to /healthz's p99 and max here: far below the stall of a blocking one.
 * On PostgreSQL beside the whole suite, replays that do not block added 30-185 ms to the p99.
 */
const STALL_P99_MS = 300;
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

let database: SharedTestDb;
let db: Db;
let acme: Tenant;
let server: ServerProcess;

beforeAll(async () => {
  database = await createSharedTestDb();
  db = database.db;
  acme = await createTenant(db, 'Acme');
  for (let start = 0; start < REPLAY_EVENTS; start += 10_000) {
    const batch = Array.from({ length: Math.min(10_000, REPLAY_EVENTS - start) }, (_, i) =>
      replayedEvent(start + i),
    );
    await insertEventBatch(db, acme.organizationId, batch);
  }
  server = await startServerProcess(
    {
      DATABASE_URL: database.databaseUrl,
      EVENT_STREAMS_PER_KEY: String(IDLE_STREAMS + 10),
      EVENT_STREAM_BUFFER_BYTES: String(BUFFER_BYTES),
    },
    { keepOutput: false },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await database?.close();
});

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
