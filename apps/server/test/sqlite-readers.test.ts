// SQLite's events list off the event loop: reader threads give exactly the pages of an inline
// read, a slow list request does not hold up /healthz or a light request of the same server
// process, and the threads close when asked. SQLite only: PostgreSQL reads do not block.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { listEvents } from '../src/runtime/event-list-memory.js';
import { startEventReaders } from '../src/runtime/event-readers.js';
import { insertEventBatch, type EventToImport } from '../src/db/repositories/event-import.js';
import type { EventProperty } from '../src/vocabulary/events.js';
import { EVENT_LIST } from '../src/domain/events.js';
import type { ListParameters } from '../src/domain/list-query.js';
import { listQueryOf } from './support/list-queries.js';
import { createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { serverBuild } from './support/server-build.js';
import { freshDatabaseUrl, onSqlite } from './support/test-database.js';
import { runTempFolder } from './support/run-temp-dir.js';
import { expectThreadsBackTo, processThreads } from './support/process-threads.js';

const EVENTS = 120_000;
let databaseUrl: string;
let inline: Db;
let acme: Tenant;

function events(count: number, offset: number): EventToImport[] {
  return Array.from({ length: count }, (_, i) => {
    const n = offset + i;
    return {
      importKey: `e-${n}`,
      timestamp: new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString(),
      sessionId: `s-${n % 5000}`,
      conversationId: null,
      source: 'router',
      sourceId: null,
      category: ['session', 'llm', 'tool'][n % 3]!,
      type: `type-${n % 7}`,
      userId: `u-${n % 1000}`,
      description: `event ${n} about ${['orders', 'refunds'][n % 2]}`,
      attributes: JSON.stringify({ n }),
    };
  });
}

describe.runIf(onSqlite)('the events list on SQLite reader threads', () => {
  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    inline = createDb(databaseUrl);
    await migrateDb(inline);
    acme = await createTenant(inline, 'Acme');
    for (let offset = 0; offset < EVENTS; offset += 20_000) {
      await insertEventBatch(inline, acme.organizationId, events(20_000, offset));
    }
  }, 120_000);

  afterAll(() => inline?.close());

  const query = (params: Partial<ListParameters<EventProperty>>) =>
    listQueryOf(inline, EVENT_LIST, acme.organizationId, params);

  it('gives the pages an inline read gives', async () => {
    const readers = startEventReaders(databaseUrl, 2);
    try {
      for (const params of [
        {},
        { page: 1000, limit: 50 },
        { search_fields: ['category' as const], search_field_values: ['llm'] },
        {
          search_fields: ['description' as const],
          search_field_values: ['refund'],
          fields: ['type' as const],
        },
        { order_by: 'session_id' as const, order_by_direction: 'desc' as const },
      ]) {
        const q = await query(params);
        const [fromThread, fromInline] = await Promise.all([
          listEvents(inline, acme.organizationId, q, readers),
          listEvents(inline, acme.organizationId, q),
        ]);
        expect(fromThread).toEqual(fromInline);
      }
    } finally {
      await readers.close();
    }
  });

  it('starts its threads with the first read, not before', async () => {
    // Each reader is one thread, or two when it runs the TypeScript sources under tsx, whose
    // loader hooks run on a thread of their own.
    const job = { organizationId: acme.organizationId, query: await query({}) };
    const before = processThreads();
    const readers = startEventReaders(databaseUrl, 2);
    try {
      expect(processThreads()).toBe(before);
      await readers.listEvents(job);
      expect(processThreads()).toBeGreaterThanOrEqual(before + 2);
      // No more: here the readers run the test run's bundle (test/support/threads-from-build.ts),
      // as a server process's do, not the sources under tsx.
      expect(processThreads()).toBe(before + 2);
    } finally {
      await readers.close();
    }
  });

  // A thread terminated while it loads better-sqlite3 13 (Node.js 22 and later) aborts the whole
  // process, this test's worker here: close() lets each load first (startModuleThread).
  it('closes threads still opening their connection once they have', async () => {
    const job = { organizationId: acme.organizationId, query: await query({}) };
    const before = processThreads();
    for (let round = 0; round < 5; round += 1) {
      const readers = startEventReaders(databaseUrl, 2);
      const read = expect(readers.listEvents(job)).rejects.toThrow(
        'the events reader threads were closed',
      );
      await readers.close();
      await read;
    }
    await expectThreadsBackTo(before);
  });

  it('answers with an error, and does not restart forever, when a thread cannot start', async () => {
    const notADatabase = join(runTempFolder('agentline-readers-'), 'junk.db');
    writeFileSync(notADatabase, 'this is not a SQLite database'.repeat(100));
    const readers = startEventReaders(notADatabase, 1);
    try {
      await expect(
        readers.listEvents({ organizationId: acme.organizationId, query: await query({}) }),
      ).rejects.toThrow(/reader thread/);
    } finally {
      await readers.close();
    }
  });

  describe('a slow list request beside light ones', () => {
    let server: ServerProcess;
    // A middle page of an attributes substring ordered by another column, each time another
    // substring: its count is a scan, and so is the walk that reads its order's positions
    // (repositories/event-positions.ts). A page asked for again is a kept answer.
    const slowPath = (digit: number) =>
      `/api/v1/events/?search_fields=attributes&search_field_values=${digit}&order_by=session_id&limit=1000&page=20`;

    beforeAll(async () => {
      server = await startServerProcess({ DATABASE_URL: databaseUrl, SQLITE_READER_THREADS: '2' });
    }, 60_000);

    afterAll(() => server?.stop());

    async function timed(path: string): Promise<number> {
      const started = performance.now();
      const res = await fetch(`${server.baseUrl}${path}`, {
        headers: { 'Service-API-Key': acme.key },
      });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      return performance.now() - started;
    }

    async function finishedAt(path: string): Promise<number> {
      await timed(path);
      return performance.now();
    }

    // Ordering, not absolute times, so that a loaded machine cannot fail it: inline, the light
    // requests would wait for the slow page ahead of them, and at most the one sent during its
    // read could finish before it (while its answer is still on the wire). A loaded machine
    // slows both alike; once one light request finished 0.8 ms after the slow page.
    it('answers /healthz and light list requests while the slow page is read', async () => {
      await timed('/healthz');
      const alone = await timed(slowPath(1));
      expect(alone).toBeGreaterThan(100);
      let slowEnded = false;
      const slowEnds = finishedAt(slowPath(2)).finally(() => (slowEnded = true));
      await new Promise((resolve) => setTimeout(resolve, 10));
      const healthzEnds = await finishedAt('/healthz');
      const lightListEnds: number[] = [];
      while (!slowEnded) lightListEnds.push(await finishedAt('/api/v1/events/?limit=0'));
      const slowEnd = await slowEnds;
      expect(healthzEnds).toBeLessThan(slowEnd);
      expect(lightListEnds.filter((end) => end < slowEnd).length).toBeGreaterThanOrEqual(2);
    });
  });
});

describe.runIf(onSqlite)("the reader threads' file, as deployed", () => {
  it('holds no PostgreSQL driver: a thread that reads SQLite alone does not load one', async () => {
    // Loading pg took most of a reader thread's start (docs/benchmarks.md, "Figures behind the
    // code"); the bundle's source map lists every module it holds.
    const map = JSON.parse(
      readFileSync(join((await serverBuild())!, 'event-read-worker.js.map'), 'utf8'),
    ) as { sources: string[] };
    expect(map.sources.some((source) => source.endsWith('src/runtime/event-read-worker.ts'))).toBe(
      true,
    );
    expect(map.sources.filter((source) => /\/node_modules\/pg(-[a-z]+)?\//.test(source))).toEqual(
      [],
    );
  });
});
