// The events stream against every kind of writer, through real server processes on one database
// (a SQLite file or a PostgreSQL database): exactly once and in commit order while two processes
// and an import write; resumption over 10,000 events with random disconnects; PostgreSQL's
// concurrent transactions, whose ids are not in commit order across organizations; SIGTERM.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run.js';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { createTenant, type Tenant } from './support/harness.js';
import {
  eventIdsOf,
  openEventStream,
  resumeTokenOf,
  type StreamedEvent,
} from './support/event-stream.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import {
  freshDatabaseUrl,
  insertTestEvents,
  onPostgres,
  onSqlite,
  queryTestDb,
} from './support/test-database.js';

let databaseUrl: string;
let db: Db;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let a: ServerProcess;
let b: ServerProcess;
const workDir = mkdtempSync(join(tmpdir(), 'agentline-stream-'));

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  globex = await createTenant(db, 'Globex');
  fx = await loadRoutingFixture(db, acme.organizationId);
  const env = { DATABASE_URL: databaseUrl, EVENT_STREAMS_PER_KEY: '50' };
  [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db.close();
  rmSync(workDir, { recursive: true, force: true });
  // A PostgreSQL test database is dropped by the project's global teardown.
  if (onSqlite) rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

/** The organization's event ids above `after`, in id order: commit order (events.ts). */
async function idsAbove(organizationId: number, after: number): Promise<number[]> {
  const rows = await queryTestDb<{ id: number }>(
    db,
    sql`SELECT id FROM events WHERE organization_id = ${organizationId} AND id > ${after} ORDER BY id`,
  );
  return rows.map((row) => Number(row.id));
}

async function highestId(organizationId: number): Promise<number> {
  const [row] = await queryTestDb<{ top: number | null }>(
    db,
    sql`SELECT max(id) AS top FROM events WHERE organization_id = ${organizationId}`,
  );
  return Number(row?.top ?? 0);
}

const idsOf = (events: StreamedEvent[]) => eventIdsOf(db, acme.organizationId, events);

class Discard extends Writable {
  override _write(_chunk: unknown, _encoding: BufferEncoding, done: () => void): void {
    done();
  }
}

/** `agentline events import` in this process, as an operator runs it. */
async function importEvents(count: number, prefix: string): Promise<void> {
  const file = join(workDir, `${prefix}.ndjson`);
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      timestamp: `2020-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
      type: `${prefix}-${i}`,
      session_id: `imported-${i}`,
    }),
  );
  writeFileSync(file, lines.join('\n') + '\n');
  const code = await runCli(['events', 'import', file, '--org', 'Acme'], {
    stdout: new Discard(),
    stderr: new Discard(),
    env: { DATABASE_URL: databaseUrl },
  });
  expect(code).toBe(0);
}

async function routeSessions(server: ServerProcess, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(
      `${server.baseUrl}/api/v1/channels/targets/${fx.targets.main}/sessions`,
      {
        method: 'POST',
        headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
        body: JSON.stringify({ user_id: `u-${i}` }),
      },
    );
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  }
}

describe('the events stream with several writers', () => {
  it('delivers exactly once, in commit order, what two processes and an import write', async () => {
    const streams = await Promise.all([
      openEventStream(a.baseUrl, { key: acme.key }),
      openEventStream(b.baseUrl, { key: acme.key }),
    ]);
    // Both have their starting position once the first keep-alive has arrived.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await highestId(acme.organizationId);
    await Promise.all([
      routeSessions(a, 40),
      routeSessions(b, 40),
      importEvents(400, 'import-1'),
      insertTestEvents(
        db,
        Array.from({ length: 50 }, () => ({
          organizationId: globex.organizationId,
          timestamp: '2026-01-01T00:00:00.000Z',
          type: 'globex-only',
        })),
      ),
    ]);
    const expected = await idsAbove(acme.organizationId, before);
    expect(expected).toHaveLength(480);
    for (const stream of streams) {
      // Everything committed arrives within a second, give or take a busy test machine.
      const received = await stream.waitFor(expected.length, 3_000);
      expect(await idsOf(received)).toEqual(expected);
      expect(received.some((event) => event.data.type === 'globex-only')).toBe(false);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const stream of streams) {
      expect(stream.events).toHaveLength(expected.length);
      stream.close();
    }
  });

  it('loses and repeats nothing over 10,000 events with random disconnects', async () => {
    const before = await highestId(acme.organizationId);
    const total = 10_000;
    const writing = (async () => {
      for (let written = 0; written < total; written += 250) {
        await insertTestEvents(
          db,
          Array.from({ length: 250 }, (_, i) => ({
            organizationId: acme.organizationId,
            timestamp: '2026-07-01T00:00:00.000Z',
            type: `bulk-${written + i}`,
          })),
        );
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const received: StreamedEvent[] = [];
    let lastEventId = await resumeTokenOf(db, acme.organizationId, before);
    let reconnects = 0;
    while (received.length < total) {
      const stream = await openEventStream(a.baseUrl, { key: acme.key, lastEventId });
      expect(stream.status).toBe(200);
      // Disconnect after a random share of what is left, or a random moment.
      const want = Math.min(total - received.length, 1 + Math.floor(Math.random() * 1500));
      await Promise.race([
        stream.waitFor(want, 10_000).catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, Math.random() * 300)),
      ]);
      stream.close();
      await stream.ended;
      received.push(...stream.events);
      if (stream.events.length > 0) lastEventId = stream.events.at(-1)!.id;
      reconnects += 1;
    }
    await writing;
    expect(reconnects).toBeGreaterThan(5);
    expect(await idsOf(received)).toEqual(await idsAbove(acme.organizationId, before));
    expect(received.map((event) => event.data.type)).toEqual(
      Array.from({ length: total }, (_, i) => `bulk-${i}`),
    );
  }, 120_000);

  it.runIf(onPostgres)(
    'waits for a lower id that commits after a higher one of another organization',
    async () => {
      const stream = await openEventStream(a.baseUrl, { key: acme.key });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const slow = new pg.Client({ connectionString: databaseUrl });
      await slow.connect();
      try {
        await slow.query('BEGIN');
        const { rows } = await slow.query<{ id: string }>(
          `INSERT INTO events (organization_id, timestamp, type) VALUES ($1, '2026-08-01T00:00:00.000Z', 'committed-late') RETURNING id`,
          [acme.organizationId],
        );
        // Globex's event takes a higher id and commits first.
        await insertTestEvents(db, [
          { organizationId: globex.organizationId, timestamp: '2026-08-01T00:00:00.000Z' },
        ]);
        const [globexTop] = await idsAbove(globex.organizationId, 0).then((ids) => ids.slice(-1));
        expect(globexTop).toBeGreaterThan(Number(rows[0]!.id));
        // Several ticks of the watcher pass while the lower id is still uncommitted.
        await new Promise((resolve) => setTimeout(resolve, 700));
        expect(stream.events).toHaveLength(0);
        await slow.query('COMMIT');
        const [late] = await stream.waitFor(1, 3_000);
        expect(late!.data.type).toBe('committed-late');
        expect(await idsOf([late!])).toEqual([Number(rows[0]!.id)]);
        await insertTestEvents(db, [
          {
            organizationId: acme.organizationId,
            timestamp: '2026-08-01T00:00:00.000Z',
            type: 'after',
          },
        ]);
        expect((await stream.waitFor(2, 3_000))[1]!.data.type).toBe('after');
      } finally {
        await slow.end();
        stream.close();
      }
    },
  );

  it('ends its streams cleanly on SIGTERM and the process exits 0', async () => {
    const server = await startServerProcess({ DATABASE_URL: databaseUrl });
    const stream = await openEventStream(server.baseUrl, { key: acme.key });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await insertTestEvents(db, [
      { organizationId: acme.organizationId, timestamp: '2026-09-01T00:00:00.000Z', type: 'last' },
    ]);
    await stream.waitFor(1, 3_000);
    const started = Date.now();
    const code = await server.stop('SIGTERM');
    await stream.ended;
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    // A clean end: no error message, no broken connection.
    expect(stream.error).toBeUndefined();
    expect(stream.failure).toBeUndefined();
  });
});
