// What one endpoint holds of its events while its receiver falls behind a burst: its attempts in
// flight (8) and at most one batch of the event feed (1,000 events) waiting beside them. A live
// batch the feed offers while one waits is refused, and the endpoint subscribes again from the
// last event it took in, so the burst is still delivered whole, each event once.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FeedEvent } from '../src/db/repositories/events.js';
import { DEFAULT_BATCH_SIZE, EventFeed } from '../src/runtime/event-feed.js';
import type { FeedSink } from '../src/runtime/feed-subscription.js';
import { createWebhookEndpoint } from '../src/use-cases/webhook-endpoints.js';
import { WebhookDispatcher } from '../src/runtime/webhooks/dispatcher.js';
import { MAX_IN_FLIGHT } from '../src/runtime/webhooks/endpoint-worker.js';
import { createTenant } from './support/harness.js';
import { createTestDb, insertTestEvents } from './support/test-database.js';
import { everyEventTo, inProcessDispatcher } from './support/webhook-delivery-testbed.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/** Written in three inserts, back to back: more than a batch beyond what the receiver takes. */
const BURST = 1_500;
const targets = { allowHttp: true, allowPrivateAddresses: true };

afterEach(() => vi.restoreAllMocks());

describe("an endpoint's waiting events", () => {
  it('are at most one feed batch beside its attempts in flight; every event still arrives once', async () => {
    // 8 attempts at 10 ms each: a few hundred events a second, well behind the burst.
    const receiver = await startWebhookReceiver(() => ({ status: 204, delayMs: 10 }));
    const db = await createTestDb();
    const { organizationId } = await createTenant(db, 'Acme');
    await createWebhookEndpoint(db, organizationId, everyEventTo(receiver.url), targets);

    // Taken in: the events of every batch the endpoint accepted from the feed. Held: taken in
    // and not yet at the receiver (waiting, or in an attempt still on its way).
    let takenIn = 0;
    let mostHeld = 0;
    let refused = 0;
    type Feed = EventFeed<readonly FeedEvent[]>;
    // The feed's own method, called with the feed the dispatcher made.
    const subscribe = Object.getOwnPropertyDescriptor(EventFeed.prototype, 'subscribe')!.value as (
      this: Feed,
      ...args: Parameters<Feed['subscribe']>
    ) => ReturnType<Feed['subscribe']>;
    vi.spyOn(EventFeed.prototype, 'subscribe').mockImplementation(function (
      this: Feed,
      organization,
      query,
      start,
      sink: FeedSink<readonly FeedEvent[]>,
    ) {
      return subscribe.call(this, organization, query, start, {
        ...sink,
        send: (events: readonly FeedEvent[]) => {
          const accepted = sink.send(events);
          if (!accepted) refused += 1;
          else takenIn += events.length;
          mostHeld = Math.max(mostHeld, takenIn - receiver.received.length);
          return accepted;
        },
      });
    });

    const dispatcher = new WebhookDispatcher(inProcessDispatcher(db, targets));
    const event = (i: number) => ({
      organizationId,
      timestamp: new Date(Date.UTC(2026, 10, 1) + i).toISOString(),
      type: `burst-${i}`,
    });
    try {
      dispatcher.start();
      // One event delivered first: the endpoint's subscription is live when the burst comes.
      await insertTestEvents(db, [event(0)]);
      await receiver.waitFor(1);
      for (let from = 1; from <= BURST; from += BURST / 3) {
        await insertTestEvents(
          db,
          Array.from({ length: BURST / 3 }, (_, i) => event(from + i)),
        );
      }
      await receiver.waitFor(BURST + 1, 60_000);
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await db.close();
    }

    expect(mostHeld).toBeLessThanOrEqual(DEFAULT_BATCH_SIZE + MAX_IN_FLIGHT);
    // The bound was reached for: the burst outran the receiver (a whole insert held at once),
    // and a live batch was refused.
    expect(mostHeld).toBeGreaterThanOrEqual(BURST / 3);
    expect(refused).toBeGreaterThan(0);
    const ids = receiver.received.map((request) => String(request.headers['webhook-id']));
    expect(ids).toHaveLength(BURST + 1);
    expect(new Set(ids).size).toBe(BURST + 1);
  }, 90_000);
});
