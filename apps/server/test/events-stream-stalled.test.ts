// Event streams whose clients stopped reading: an ended stream's connection holds the last bytes
// the server cannot write. It must not hold them, nor the process past its grace period on
// SIGTERM, for more than a moment (http/stream-connections.ts). A real server process on the
// backend under test; the clients' buffers are filled first.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { ENDED_STREAM_IDLE_MS } from '../src/http/stream-connections.js';
import { migrateDb } from '../src/db/migrate.js';
import { createTenant, type Tenant } from './support/harness.js';
import { openEventStream } from './support/event-stream.js';
import { startServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, insertTestEvents, onSqlite } from './support/test-database.js';

const STALLED_STREAMS = 20;
const EXIT_BOUND_MS = 3_000;

let databaseUrl: string;
let db: Db;
let acme: Tenant;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
}, 60_000);

afterAll(async () => {
  await db.close();
  // A PostgreSQL test database is dropped by the project's global teardown.
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

/** Events of `bytes` in all, in inserts of a few MiB. */
async function writeEvents(bytes: number): Promise<void> {
  const description = 'x'.repeat(64 * 1024);
  const perInsert = 64;
  for (let written = 0; written < bytes; written += perInsert * description.length) {
    await insertTestEvents(
      db,
      Array.from({ length: perInsert }, () => ({
        organizationId: acme.organizationId,
        timestamp: '2026-10-01T00:00:00.000Z',
        type: 'filler',
        description,
      })),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A stream the server ended reached its client whole: every byte read, then a clean end. */
function endedCleanly(stream: { failure: unknown }): boolean {
  return stream.failure === undefined;
}

describe('event streams whose clients stopped reading', () => {
  it(
    'cuts the connection of a stream that ended with SLOW_CONSUMER once its client takes nothing',
    async () => {
      const server = await startServerProcess({
        DATABASE_URL: databaseUrl,
        EVENT_STREAMS_PER_KEY: '1',
      });
      try {
        const stalled = await openEventStream(server.baseUrl, { key: acme.key, paused: true });
        expect(stalled.status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 300));
        // More than the socket buffers and the server's own buffer for a stream hold (4 MiB).
        await writeEvents(16 * 1024 * 1024);
        // Its connection holds the key's one stream, open or ended, until it closes.
        expect((await openEventStream(server.baseUrl, { key: acme.key })).status).toBe(429);
        // The stream ended with SLOW_CONSUMER as the writing overflowed it; once its client has
        // taken nothing for a while, its connection is cut, with the rest of its bytes.
        await new Promise((resolve) => setTimeout(resolve, ENDED_STREAM_IDLE_MS + 2_000));
        stalled.resume();
        await stalled.ended;
        expect(stalled.error).toBeUndefined();
        expect(endedCleanly(stalled)).toBe(false);
        const next = await openEventStream(server.baseUrl, { key: acme.key });
        expect(next.status).toBe(200);
        next.close();
      } finally {
        await server.stop('SIGTERM');
      }
    },
    60_000 + ENDED_STREAM_IDLE_MS,
  );

  it('on SIGTERM, cuts the streams still open whose clients stopped reading, and exits 0 in good time', async () => {
    // A buffer larger than what is written: the streams stay open, their bytes held, until the
    // signal ends them.
    const server = await startServerProcess({
      DATABASE_URL: databaseUrl,
      EVENT_STREAMS_PER_KEY: String(STALLED_STREAMS),
      EVENT_STREAM_BUFFER_BYTES: String(64 * 1024 * 1024),
    });
    const open = () => openEventStream(server.baseUrl, { key: acme.key, paused: true });
    const stalled = await Promise.all(Array.from({ length: STALLED_STREAMS }, open));
    expect(stalled.map((stream) => stream.status)).toEqual(
      Array.from({ length: STALLED_STREAMS }, () => 200),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // More than the kernel's socket buffers hold, so the server holds the rest of each.
    await writeEvents(16 * 1024 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 500));

    const started = performance.now();
    const code = await server.stop('SIGTERM');
    const elapsed = performance.now() - started;
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(EXIT_BOUND_MS);
    // Each was still open with bytes the server held: its connection was cut, not ended.
    for (const stream of stalled) stream.resume();
    await Promise.all(stalled.map((stream) => stream.ended));
    expect(stalled.filter(endedCleanly)).toEqual([]);
    expect(stalled.filter((stream) => stream.error)).toEqual([]);
  }, 60_000);
});
