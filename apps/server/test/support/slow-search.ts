// A list read that is slow on purpose and the same on both databases, for the tests of what one
// client's slow reads may cost the others. Each event's attributes hold a long run of one letter,
// and the search value is one letter longer: a substring search (LIKE, ILIKE) tries a match at
// every position of the run and gets to its end each time before failing, so every row costs the
// square of the run's length and nothing matches. Over the default 1,000 such events a search
// takes a second or two on the project's 2-core machine, where the same search over ordinary
// events costs milliseconds: long past what the tests hold it against (a routing, a get by id, a
// 250 ms timeout). It burns that CPU in a PostgreSQL backend unless a timeout cancels it, and
// whole in a SQLite reader thread, which a timeout gives up but cannot stop: so no more events.
// The run is as long as a search value may be (the spec's 1,024 characters) allows.

import type { Db } from '../../src/db/engine/client.js';
import { insertTestEvents } from './test-database.js';

const RUN = 1000;

/** Adds `count` events to the organization whose attributes the slow search has to crawl. */
export async function insertSlowSearchEvents(
  db: Db,
  organizationId: number,
  count = 1000,
): Promise<void> {
  for (let done = 0; done < count; done += 500) {
    await insertTestEvents(
      db,
      Array.from({ length: Math.min(500, count - done) }, (_, i) => ({
        organizationId,
        timestamp: new Date(Date.UTC(2026, 0, 1) + (done + i) * 1000).toISOString(),
        sessionId: `slow-${done + i}`,
        attributes: { run: 'a'.repeat(RUN) },
      })),
    );
  }
}

let searches = 0;

/**
 * The events list path of a slow search (one item asked for; none matches). Each call gives a
 * new value (the run and a number), as the list keeps the count of a search it has answered.
 */
export function slowSearchPath(): string {
  searches += 1;
  return `/api/v1/events/?limit=1&search_fields=attributes&search_field_values=${'a'.repeat(RUN + 1)}-${searches}`;
}
