// The live feed hands a batch to its subscribers a few at a time (runtime/event-feed.ts,
// SENDS_PER_TURN), so that a thousand streams of one organization do not hold the process's other
// requests until every one of them is written; each subscriber still gets every event once, in
// order.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { EventFeed } from '../src/runtime/event-feed.js';
import type { FeedEvent } from '../src/db/repositories/events.js';
import { createTenant, type Tenant } from './support/harness.js';
import { createTestDb, insertTestEvents } from './support/test-database.js';

let db: Db;
let acme: Tenant;

beforeAll(async () => {
  db = await createTestDb();
  acme = await createTenant(db, 'Acme');
});

afterAll(() => db?.close());

const SUBSCRIBERS = 120;

describe('the live feed', () => {
  it('hands a batch to many subscribers over several turns of the event loop, each once', async () => {
    // A counter the event loop advances once per turn, beside the feed's deliveries.
    let turn = 0;
    let counting = true;
    const count = () => {
      turn += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);

    const feed = new EventFeed<readonly FeedEvent[]>(db, {
      encode: (events) => events,
      pollMs: 10,
    });
    const received = Array.from({ length: SUBSCRIBERS }, () => ({
      ids: [] as number[],
      turns: [] as number[],
    }));
    const subscriptions = await Promise.all(
      received.map((sink) =>
        feed.subscribe(acme.organizationId, { filters: [], window: {}, projection: null }, 'now', {
          send: (events) => {
            sink.ids.push(...events.map((event) => event.id));
            sink.turns.push(turn);
            return true;
          },
          ready: () => Promise.resolve(Number.POSITIVE_INFINITY),
          fail: (failure) => {
            throw new Error(`unexpected failure ${failure.code}`);
          },
          end: () => undefined,
        }),
      ),
    );
    // Let every subscriber turn live before the events come.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await insertTestEvents(
      db,
      Array.from({ length: 3 }, (_, i) => ({
        organizationId: acme.organizationId,
        timestamp: new Date(Date.UTC(2026, 10, 25, 12, 0, i)).toISOString(),
        type: `delivered-${i}`,
      })),
    );
    for (let attempt = 0; attempt < 500 && received.some((r) => r.ids.length < 3); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    counting = false;
    for (const subscription of subscriptions) subscription.close();
    feed.close();

    const ids = received[0]!.ids;
    expect(ids).toHaveLength(3);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    for (const sink of received) {
      expect(sink.ids).toEqual(ids);
      expect(sink.turns).toHaveLength(1);
    }
    // 120 subscribers at 50 a turn: three turns, not one.
    expect(new Set(received.map((sink) => sink.turns[0])).size).toBeGreaterThanOrEqual(3);
  });
});
