// On SQLite a description search is found through the trigram index only when the index matches
// few enough events; how many it matches is counted once per value and kept for every
// organization (runtime/event-list-memory.ts), until many events later.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/engine/client.js';
import { runSteps } from '../src/db/engine/portable-sql.js';
import type { SqliteDb } from '../src/db/engine/sqlite-open.js';
import { migrateDb } from '../src/db/migrate.js';
import { insertEventBatch } from '../src/db/repositories/event-import.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { EVENT_LIST } from '../src/domain/events.js';
import { eventListMemory } from '../src/runtime/event-list-memory.js';
import { listQueryOf } from './support/list-queries.js';
import { recordSqliteReads } from './support/sent-statements.js';
import { freshDatabaseUrl, onSqlite, secondApartEvents } from './support/test-database.js';

let databaseUrl: string;
let db: SqliteDb;
let umbrella: number;
let globex: number;

beforeAll(async () => {
  if (!onSqlite) return;
  databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl) as SqliteDb;
  await migrateDb(db);
  umbrella = (await createOrganization(db, 'Umbrella')).id;
  globex = (await createOrganization(db, 'Globex')).id;
  // Two rare phrases among 2,000 events of a common one.
  await insertEventBatch(
    db,
    umbrella,
    secondApartEvents('umbrella', 2_000, (i) => ({
      description: i % 1000 === 7 ? `A needle in order ${i}` : `Looked up order ${i}`,
    })),
  );
});

afterAll(async () => {
  if (!onSqlite) return;
  await db.close();
  rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

describe.runIf(onSqlite)('the trigram index on SQLite, chosen from kept counts', () => {
  it("counts a word's matches once for every organization, until many events later", async () => {
    const { reads, stop } = recordSqliteReads(db);
    let seen = 0;
    /** Whether the index serves `value`, and how many times the index was asked to tell. */
    const choose = async (
      organizationId: number,
      value: string,
      throughId: number,
      organizationCount: number,
    ) => {
      const query = await listQueryOf(db, EVENT_LIST, organizationId, {
        search_fields: ['description'],
        search_field_values: [value],
      });
      const resolved = await runSteps(db, () =>
        eventListMemory(db).resolveValues(organizationId, query, throughId, organizationCount),
      );
      const probes = reads
        .slice(seen)
        .filter(({ text }) => text.includes('events_description_fts')).length;
      seen = reads.length;
      return { served: resolved.trigrams.has(query.filters[0]!), probes };
    };
    try {
      // A rare phrase: counted once, then the count serves another read and another organization.
      expect(await choose(umbrella, 'needle in', 1_000, 2_000)).toEqual({
        served: true,
        probes: 1,
      });
      expect(await choose(umbrella, 'needle in', 1_000, 2_000)).toEqual({
        served: true,
        probes: 0,
      });
      expect(await choose(globex, 'needle in', 5_000, 700)).toEqual({ served: true, probes: 0 });
      // Many new events later it is counted again.
      expect(await choose(umbrella, 'needle in', 11_001, 2_000)).toEqual({
        served: true,
        probes: 1,
      });
      // A common phrase, counted up to twice what an organization of 700 events needs: too few
      // to tell for one of 2,000, which counts it again (and further).
      expect(await choose(globex, 'Looked up', 1_000, 700)).toEqual({ served: false, probes: 1 });
      expect(await choose(umbrella, 'Looked up', 1_000, 2_000)).toEqual({
        served: false,
        probes: 1,
      });
      expect(await choose(globex, 'Looked up', 1_000, 700)).toEqual({ served: false, probes: 0 });
      // Two characters have no trigram: never asked.
      expect(await choose(umbrella, 'ne', 1_000, 2_000)).toEqual({ served: false, probes: 0 });
    } finally {
      stop();
    }
  });
});
