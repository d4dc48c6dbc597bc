// The kept list answers cannot be grown by the query strings a client makes up: spellings of one
// query (parameters reordered, unknown ones added) share its entry, and distinct queries stay
// within the configured bytes, keys and overhead counted; a server process asked many of them
// stays within a fixed resident size.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { replayEvents } from '../src/db/repositories/events.js';
import { listEvents } from '../src/runtime/event-list-memory.js';
import type { EventReaders } from '../src/runtime/event-readers.js';
import { ENTRY_OVERHEAD_BYTES, KeptAnswers } from '../src/runtime/kept-answers.js';
import { distinctEventsQuery, sendAll, type QueryKind } from './support/distinct-queries.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { startServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, insertTestEvents } from './support/test-database.js';

const MAX_BYTES = 64 * 1024;

let databaseUrl: string;
let db: Db;
let api: TestApi;
let server: LiveServer;
let acme: Tenant;
const keptAnswers = new KeptAnswers({ maxBytes: MAX_BYTES });
/** Pages the app read (a kept answer reads none). */
let pagesRead = 0;

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  const readers: EventReaders = {
    listEvents: ({ organizationId, query }) => {
      pagesRead += 1;
      return listEvents(db, organizationId, query);
    },
    replayEvents: (job) => replayEvents(db, job),
    close: async () => {},
  };
  api = await createTestApi(db, { eventReaders: readers, keptAnswers });
  acme = await createTenant(db, 'Acme');
  await insertTestEvents(
    db,
    Array.from({ length: 5 }, (_, i) => ({
      organizationId: acme.organizationId,
      timestamp: `2026-05-01T10:0${i}:00.000Z`,
      description: `event ${i}`,
    })),
  );
  server = await startLiveServer(api.app);
});

afterAll(async () => {
  await server.close();
  await api.close();
});

/**
 * Sends the queries of `kind` among the first `count`, the first alone, checking the bound after
 * each answer; returns the pages read for all but the first.
 */
async function sendKind(kind: QueryKind, count: number, padding: number): Promise<number> {
  const paths = Array.from({ length: count }, (_, i) => distinctEventsQuery(i, padding))
    .filter((query) => query.kind === kind)
    .map((query) => `/api/v1/events/${query.query}`);
  const each = () => {
    expect(keptAnswers.bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(keptAnswers.size).toBeLessThanOrEqual(MAX_BYTES / ENTRY_OVERHEAD_BYTES);
  };
  await sendAll(server.baseUrl, acme.key, 1, () => paths[0]!, { each });
  const before = pagesRead;
  await sendAll(server.baseUrl, acme.key, paths.length - 1, (i) => paths[i + 1]!, { each });
  return pagesRead - before;
}

describe('kept answers under distinct query strings', () => {
  it('keeps one entry for a query however its parameters are spelled', async () => {
    // 400 unknown parameters of their own on one query (six times the entries the budget holds,
    // were each kept apart): read once, then kept.
    expect(await sendKind('unknown parameter', 1_200, 200)).toBe(0);
    // 400 spellings of another query (24 orders of its parameters, each with an unknown one).
    expect(await sendKind('reordered', 1_200, 200)).toBe(0);
  }, 120_000);

  it('holds distinct queries within the configured bytes, keys and overhead counted', async () => {
    // 200 queries of their own, each with a 1,024-character search value (about ten times what
    // the budget holds): every one is read, and kept while the least recently used go.
    expect(await sendKind('distinct', 600, 2_000)).toBe(199);
    expect(keptAnswers.bytes).toBeGreaterThan(MAX_BYTES / 2);
  }, 120_000);
});

describe('a server process asked many distinct query strings', () => {
  it('stays within a fixed resident size', async () => {
    const process = await startServerProcess(
      { DATABASE_URL: databaseUrl, KEPT_ANSWERS_MAX_BYTES: String(1024 * 1024) },
      { keepOutput: false },
    );
    try {
      // Spellings of two queries, each one of its own (no distinct queries: their entries in the
      // list's cached counts would stand for growth here, within that cache's own bound).
      const path = (i: number) =>
        `/api/v1/events/${distinctEventsQuery(i + Math.floor(i / 2), 7_000).query}`;
      // Warmed up: the code and the database's pages are loaded.
      await sendAll(process.baseUrl, acme.key, 2_000, path);
      const warm = process.rssMiB();
      let highest = warm;
      await sendAll(process.baseUrl, acme.key, 8_000, (i) => path(2_000 + i), {
        each: (i) => {
          if (i % 1_000 === 0) highest = Math.max(highest, process.rssMiB());
        },
      });
      highest = Math.max(highest, process.rssMiB());
      // Kept apart by query string as sent, these 7,000-character ones took over 60 MiB.
      expect(highest - warm, `warm ${warm} MiB, highest ${highest} MiB`).toBeLessThan(40);
    } finally {
      await process.stop();
    }
  }, 90_000);
});
