// The events list's memory (runtime/event-list-memory.ts) serves a kept count as is at its own
// version, brings it up to date by counting only the ids above its own, and counts anew once
// retention removed events since or when asked for an older version (a PostgreSQL request in an
// older snapshot). Versions are made up here, so each path shows in the count it answers.

import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { runSteps } from '../src/db/engine/portable-sql.js';
import {
  eventsVersion,
  NOTHING_RESOLVED,
  UNFILTERED,
  type EventsVersion,
} from '../src/db/repositories/event-conditions.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { eventListMemory } from '../src/runtime/event-list-memory.js';
import { createTestDb, insertTestEvents } from './support/test-database.js';

let db: Db;
let organizationId: number;
let first: EventsVersion;

beforeAll(async () => {
  db = await createTestDb();
  organizationId = (await createOrganization(db, 'Acme')).id;
  const events = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      organizationId,
      timestamp: `2026-05-01T10:0${i}:00.000Z`,
    }));
  await insertTestEvents(db, events(3));
  first = await runSteps(db, () => eventsVersion(db, organizationId));
  await insertTestEvents(db, events(2));
});

afterAll(() => db?.close());

const countAt = (version: EventsVersion) =>
  runSteps(db, () =>
    eventListMemory(db).count(organizationId, UNFILTERED, NOTHING_RESOLVED, version),
  );

it('keeps, brings up to date, or counts anew, as the version asked for allows', async () => {
  // Counted anew at the first version's made-up stamp: all 5 events the table holds now.
  expect(await countAt(first)).toBe(5);
  // One more event, but the same version asked for: the kept 5, where a count anew finds 6.
  await insertTestEvents(db, [{ organizationId, timestamp: '2026-05-01T11:00:00.000Z' }]);
  expect(await countAt(first)).toBe(5);
  // Two ids later: the kept 5 plus the 3 events with ids above the first version's.
  const later = { ...first, throughId: first.throughId + 2 };
  expect(await countAt(later)).toBe(8);
  // An older version than the kept one is counted anew, not served the newer count.
  expect(await countAt(first)).toBe(6);
  // So is a version after retention removed events.
  await countAt(later);
  expect(await countAt({ ...later, removed: later.removed + 1 })).toBe(6);
});
