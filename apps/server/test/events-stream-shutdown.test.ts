// SIGTERM with event streams whose clients stopped reading: their connections hold the last
// bytes the server cannot write, and must not hold the process past its grace period. A real
// server process on the backend under test; the clients' buffers are filled before the signal.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/engine/migrate.js';
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

describe('SIGTERM with stalled event streams', () => {
  it('cuts the streams whose clients stopped reading, and exits 0 in good time', async () => {
    const server = await startServerProcess({
      DATABASE_URL: databaseUrl,
      EVENT_STREAMS_PER_KEY: String(STALLED_STREAMS + 1),
    });
    const open = () => openEventStream(server.baseUrl, { key: acme.key, paused: true });
    const stalled = await Promise.all(Array.from({ length: STALLED_STREAMS }, open));
    // One more, read after the writing: it shows a client that did not read had its buffers full.
    const witness = await open();
    expect([...stalled, witness].map((stream) => stream.status)).toEqual(
      Array.from({ length: STALLED_STREAMS + 1 }, () => 200),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // More than the socket buffers and the server's own buffer for a stream hold (4 MiB).
    await writeEvents(16 * 1024 * 1024);
    await new Promise((resolve) => setTimeout(resolve, 500));
    witness.resume();
    await witness.ended;
    expect(witness.error?.code).toBe('SLOW_CONSUMER');

    const started = performance.now();
    const code = await server.stop('SIGTERM');
    const elapsed = performance.now() - started;
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(EXIT_BOUND_MS);
    for (const stream of stalled) stream.close();
  }, 60_000);
});
