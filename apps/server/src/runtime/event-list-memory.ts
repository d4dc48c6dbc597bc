// What the events list keeps between reads, in process memory per database handle, and where a
// page is read. Each kept thing is checked against the version of the organization's events it
// was read at (db/repositories/event-conditions.ts, eventsVersion): reused while it holds,
// brought up to date through the repositories' queries after new events, read anew otherwise.
// Why each stays exact: docs/architecture.md, "Reading the events list". A reader thread
// (event-read-worker.ts) has a database handle, and so a memory, of its own.

import type { Db } from '../db/engine/client.js';
import { ByteBoundedLru, perDatabase, stringBytes } from '../db/engine/caches.js';
import type { Steps } from '../db/engine/portable-sql.js';
import {
  fewTrigramMatches,
  isCounted,
  matchingValues,
  MAX_CACHED_BYTES,
  type EventSelection,
  type EventsVersion,
  type ResolvedValues,
} from '../db/repositories/event-conditions.js';
import {
  countDeltaBound,
  countEvents,
  countEventsAbove,
  listEvents as readEventsPage,
  type EventsListMemory,
  type EventsPage,
} from '../db/repositories/events.js';
import type { EventProperty } from '../vocabulary/events.js';
import type { ListQuery, SearchFilter } from '../vocabulary/list-query.js';
import type { EventReaders } from './event-readers.js';

interface KeptCount extends EventsVersion {
  count: number;
}

interface KeptValues {
  throughId: number;
  values: string[] | null;
}

class EventListMemory implements EventsListMemory {
  /** Per (organization, filter): the count and the version it was read at. */
  readonly #counts = new ByteBoundedLru<KeptCount>(MAX_CACHED_BYTES, () => 0);
  /** Per (organization, column, substring): the matching values, exact while no event is added. */
  readonly #values = new ByteBoundedLru<KeptValues>(MAX_CACHED_BYTES, ({ values }) =>
    (values ?? []).reduce((bytes, value) => bytes + stringBytes(value), 0),
  );

  constructor(private readonly db: Db) {}

  *count(
    organizationId: number,
    selection: EventSelection,
    resolved: ResolvedValues,
    version: EventsVersion,
    organizationCount?: number,
  ): Steps<number> {
    const { db } = this;
    const { throughId, removed } = version;
    const key = JSON.stringify([organizationId, selection.filters, selection.window]);
    // A count from before retention removed events is not brought up to date: counted anew.
    const kept = this.#counts.get(key);
    const reusable = kept?.removed === removed ? kept : undefined;
    let count: number;
    if (reusable && reusable.throughId === throughId) {
      count = reusable.count;
    } else if (
      // On PostgreSQL a request in an older snapshot may find a count kept by a newer one.
      reusable &&
      reusable.throughId < throughId &&
      throughId - reusable.throughId <= countDeltaBound(db, organizationCount ?? reusable.count)
    ) {
      count =
        reusable.count +
        (yield* countEventsAbove(db, organizationId, selection, resolved, reusable.throughId));
    } else {
      count = yield* countEvents(db, organizationId, selection, resolved);
    }
    this.#counts.set(key, { throughId, removed, count });
    return count;
  }

  /**
   * Events through `throughId` are never added or changed, so values resolved at the same
   * highest id are reused (retention may remove the last event of a value since: matching it
   * finds nothing).
   */
  *resolveValues(
    organizationId: number,
    query: ListQuery<EventProperty>,
    throughId: number,
    organizationCount?: number,
  ): Steps<ResolvedValues> {
    const { db } = this;
    const values = new Map<SearchFilter<EventProperty>, string[] | null>();
    const trigrams = new Set<SearchFilter<EventProperty>>();
    for (const filter of query.filters) {
      if (
        filter.property === 'description' &&
        organizationCount !== undefined &&
        (yield* fewTrigramMatches(db, String(filter.value), organizationCount))
      ) {
        trigrams.add(filter);
      }
      if (isCounted(filter.property)) {
        const key = JSON.stringify([organizationId, filter.property, filter.value]);
        const kept = this.#values.get(key);
        const matching =
          kept?.throughId === throughId
            ? kept.values
            : yield* matchingValues(db, organizationId, filter.property, String(filter.value));
        this.#values.set(key, { throughId, values: matching });
        values.set(filter, matching);
      }
    }
    return { values, trigrams };
  }
}

/** The events list's memory of `db`'s reads in this thread. */
export const eventListMemory = perDatabase((db: Db) => new EventListMemory(db));

/** The events page; with `readers`, read on one of them (each with a memory of its own). */
export function listEvents(
  db: Db,
  organizationId: number,
  query: ListQuery<EventProperty>,
  readers?: EventReaders,
): Promise<EventsPage> {
  return readers
    ? readers.listEvents({ organizationId, query })
    : readEventsPage(db, organizationId, query, eventListMemory(db));
}
