// Routed sessions' events are searchable by description like every other event, also when they
// are written by group commits in which a write failed (its savepoint rolled back), with other
// writers' events in between; on SQLite the FTS5 index stays exactly the stored descriptions.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeSession } from '../src/use-cases/routing/session-routing.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { createRoutingTestbed, type RoutingFixture } from './support/routing-fixture.js';
import { checkDescriptionIndex, insertTestEvents, onSqlite } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

const route = (targetId: number, userId: string) =>
  routeSession(api.db, acme.organizationId, targetId, { userId, conversationId: null });

async function searchCount(term: string) {
  const res = await api.request<Schemas['EventListResponse']>(
    'GET',
    `/api/v1/events/?limit=0&search_fields=description&search_field_values=${encodeURIComponent(term)}`,
    { key: acme.key },
  );
  expect(res.status).toBe(200);
  return res.body.total_count;
}

describe('descriptions of routed sessions', () => {
  it('are found by search after group commits, failed writes and trigger writes mixed', async () => {
    // Three batches: each routes 20 sessions at once, one of them to a target that does not exist
    // (its savepoint rolls back), then another writer adds events through the trigger.
    for (let round = 0; round < 3; round += 1) {
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 20 }, (_, i) => route(fx.targets.main, `user-${round}-${i}`)),
        route(999_999, 'nobody'),
      ]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(20);
      await insertTestEvents(api.db, [
        {
          organizationId: acme.organizationId,
          timestamp: '2026-05-01T00:00:00.000Z',
          description: `Written by hand ${round}`,
        },
      ]);
    }
    expect(await searchCount("target's own agent")).toBe(60);
    expect(await searchCount('written by HAND')).toBe(3);
  });

  it.runIf(onSqlite)('leave the FTS5 index equal to the events table', () => {
    const { db } = api;
    if (db.kind !== 'sqlite') throw new Error('expected SQLite');
    expect(() => checkDescriptionIndex(db)).not.toThrow();
  });
});
