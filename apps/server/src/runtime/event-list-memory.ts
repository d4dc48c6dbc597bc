// What the events list keeps between reads, in process memory per database handle, and where a
// page is read. Each kept thing is checked against the version of the organization's events it
// was read at (db/repositories/event-conditions.ts, eventsVersion): reused while it holds,
// brought up to date through the repositories' queries after new events, read anew otherwise.
// Why each stays exact: docs/architecture.md, "Reading the events list". A reader thread
// (event-read-worker.ts) has a database handle, and so a memory, of its own.

import type { Db } from '../db/engine/client.js';
import { perDatabase } from '../db/engine/caches.js';
import type { Steps } from '../db/engine/portable-sql.js';
import {
  fewTrigramMatchesBelow,
  isCounted,
  matchingValues,
  searchesIdentifier,
  trigramMatches,
  type EventsVersion,
} from '../db/repositories/event-conditions.js';
import { hoursOfEventsAbove, readHours, type HourCount } from '../db/repositories/event-pages.js';
import { eventsAfter, newBefore, readPositions } from '../db/repositories/event-positions.js';
import {
  countDeltaBound,
  countEvents,
  countEventsAbove,
  listEvents as readEventsPage,
  type EventsListMemory,
  type EventsPage,
} from '../db/repositories/events.js';
import type { EventProperty } from '../vocabulary/events.js';
import type { ListPosition, ListQuery, SearchFilter } from '../vocabulary/list-query.js';
import type { EventReaders } from './event-readers.js';
import { ByteBoundedLru, stringBytes } from './kept-answers.js';

/**
 * Per process and database, for each of the counts, resolved values, hours and positions: what
 * their entries may take, keys (search values included) and overhead counted (ByteBoundedLru).
 */
const MAX_CACHED_BYTES = 16 * 1024 * 1024;

interface KeptCount extends EventsVersion {
  count: number;
}

interface KeptValues {
  throughId: number;
  values: string[] | null;
}

interface KeptHours extends EventsVersion {
  /** Oldest first. */
  hours: HourCount[];
}

interface KeptTrigramMatches {
  throughId: number;
  /** The trigram index's matches of the value, counted up to `cap`. */
  matches: number;
  cap: number;
}

/**
 * Trigram matches are counted up to this many times what the asking organization's choice needs,
 * so that organizations of other sizes, and one that grows, are answered from the same count.
 */
const TRIGRAM_CAP_HEADROOM = 2;
/**
 * A value's kept trigram matches choose its reads until this many event ids were added since: they
 * choose an index, not an answer (both reads find the same events), so a count that more events
 * (or retention) made stale costs time, never a wrong page.
 */
const MAX_TRIGRAM_NEW_IDS = 10_000;

/**
 * Whether a kept trigram count still chooses a read at `throughId` for an organization whose
 * choice turns at `below` matches: at most MAX_TRIGRAM_NEW_IDS ids later, and a count under its
 * cap (the whole count) or at a cap of at least `below` (there are as many).
 */
function trigramCountTells(kept: KeptTrigramMatches, throughId: number, below: number): boolean {
  const newIds = throughId - kept.throughId;
  return (
    newIds >= 0 && newIds <= MAX_TRIGRAM_NEW_IDS && (kept.matches < kept.cap || kept.cap >= below)
  );
}

/** What an hour takes in the memory: its text, its count and the array's slot. */
const HOUR_BYTES = 64;
/**
 * Up to this many new event ids since kept hours are read as events (which hours they fell in),
 * so only those hours' counts are read again; beyond, all of them are.
 */
const MAX_HOURS_DELTA = 20_000;

/** About this many positions are kept per query, at least MIN_EVERY events apart. */
const POSITIONS_PER_QUERY = 1000;
const MIN_EVERY = 50;
/**
 * Up to this many new event ids since the kept positions, the new events before a position are
 * counted (a read of those ids alone); beyond, the positions are read anew.
 */
const MAX_NEW_IDS = 10_000;

interface KeptPositions extends EventsVersion {
  every: number;
  /** positions[k]: the event at rank (k + 1) x every - 1 of the order, at the kept version. */
  positions: ListPosition[];
}

/** The events list's memory of `db`'s reads, each kind in a ByteBoundedLru of its own. */
function keptReads(db: Db): EventsListMemory {
  /** Per (organization, search pairs and window): the count and the version it was read at. */
  const counts = new ByteBoundedLru<KeptCount>(MAX_CACHED_BYTES, () => 0);
  /** Per description value: how many events of every organization the trigram index matches. */
  const keptTrigramMatches = new ByteBoundedLru<KeptTrigramMatches>(MAX_CACHED_BYTES, () => 0);
  /** Per (organization, column, substring): the matching values, exact while no event is added. */
  const resolvedValues = new ByteBoundedLru<KeptValues>(MAX_CACHED_BYTES, ({ values }) =>
    (values ?? []).reduce((bytes, value) => bytes + stringBytes(value), 0),
  );
  /** Per (organization, counted selection): a year of hours of one query is about 560 KB. */
  const keptHours = new ByteBoundedLru<KeptHours>(
    MAX_CACHED_BYTES,
    ({ hours }) => hours.length * HOUR_BYTES,
  );
  /** Per (organization, search pairs, window and order): every so many events' positions. */
  const keptPositions = new ByteBoundedLru<KeptPositions>(MAX_CACHED_BYTES, ({ positions }) =>
    positions.reduce(
      (total, { value }) => total + 32 + (typeof value === 'string' ? stringBytes(value) : 8),
      0,
    ),
  );

  /**
   * Whether the trigram index matches `value` in few enough events to find it through the index
   * in an organization of `organizationCount` events, from a kept count while it tells.
   */
  function* fewTrigramMatches(
    value: string,
    organizationCount: number,
    throughId: number,
  ): Steps<boolean> {
    const below = fewTrigramMatchesBelow(organizationCount);
    const kept = keptTrigramMatches.get(value);
    if (kept && trigramCountTells(kept, throughId, below)) return kept.matches < below;
    const cap = below * TRIGRAM_CAP_HEADROOM;
    const matches = yield* trigramMatches(value, cap);
    keptTrigramMatches.set(value, { throughId, matches, cap });
    return matches < below;
  }

  return {
    *count(organizationId, selection, resolved, version, organizationCount) {
      const key = JSON.stringify([organizationId, selection.filters, selection.window]);
      const kept = counts.get(key);
      const maxNewIds = kept ? countDeltaBound(db, organizationCount ?? kept.count) : 0;
      let count: number;
      switch (keptUse(kept, version, maxNewIds)) {
        case 'as is':
          count = kept!.count;
          break;
        case 'brought up to date':
          count =
            kept!.count +
            (yield* countEventsAbove(db, organizationId, selection, resolved, kept!.throughId));
          break;
        case 'read anew':
          count = yield* countEvents(db, organizationId, selection, resolved);
      }
      counts.set(key, { ...version, count });
      return count;
    },

    // Events through `throughId` are never added or changed, so values resolved at the same
    // highest id are reused (retention may remove the last event of a value since: matching it
    // finds nothing).
    *resolveValues(organizationId, query, throughId, organizationCount) {
      const values = new Map<SearchFilter<EventProperty>, string[] | null>();
      const trigrams = new Set<SearchFilter<EventProperty>>();
      for (const filter of query.filters) {
        if (
          filter.property === 'description' &&
          organizationCount !== undefined &&
          !searchesIdentifier(query) &&
          (yield* fewTrigramMatches(String(filter.value), organizationCount, throughId))
        ) {
          trigrams.add(filter);
        }
        if (isCounted(filter.property)) {
          const key = JSON.stringify([organizationId, filter.property, filter.value]);
          const kept = resolvedValues.get(key);
          const matching =
            kept?.throughId === throughId
              ? kept.values
              : yield* matchingValues(db, organizationId, filter.property, String(filter.value));
          resolvedValues.set(key, { throughId, values: matching });
          values.set(filter, matching);
        }
      }
      return { values, trigrams };
    },

    // A year is 8,760 rows, and turning them into objects took most of a page's time, so they
    // are kept per selection and version (as counts are). After new events, only the hours they
    // fell in are read again: an organization's events with ids up to the kept version's are
    // never added later, and none was removed while the removed count holds.
    *hours(organizationId, selection, version) {
      if (selection.values.length === 0) return [];
      const key = JSON.stringify([organizationId, selection.property, selection.values]);
      const kept = keptHours.get(key);
      let hours: HourCount[];
      switch (keptUse(kept, version, MAX_HOURS_DELTA)) {
        case 'as is':
          hours = kept!.hours;
          break;
        case 'brought up to date': {
          const touched = yield* hoursOfEventsAbove(
            db,
            organizationId,
            kept!.throughId,
            version.throughId,
          );
          hours =
            touched.length === 0
              ? kept!.hours
              : mergeHours(
                  kept!.hours,
                  touched,
                  yield* readHours(organizationId, selection, touched),
                );
          break;
        }
        case 'read anew':
          hours = yield* readHours(organizationId, selection);
      }
      keptHours.set(key, { ...version, hours });
      return hours;
    },

    // After new events (up to MAX_NEW_IDS more ids) the kept positions still hold: the events
    // before a position are its rank plus the new ones that sort before it (newBefore).
    *positionedStart(organizationId, query, resolved, version, totalCount, access) {
      const every = Math.max(MIN_EVERY, Math.ceil(totalCount / POSITIONS_PER_QUERY));
      // Near either end an OFFSET (from the other end past the middle: events.ts) skips few.
      const fromEnd = totalCount - Math.min(query.offset + query.limit, totalCount);
      if (query.after || Math.min(query.offset, fromEnd) < 2 * every) return null;
      const key = JSON.stringify([organizationId, query.filters, query.window, query.order]);
      let kept = keptPositions.get(key);
      if (keptUse(kept, version, MAX_NEW_IDS) === 'read anew') {
        kept = {
          ...version,
          every,
          positions: yield* readPositions(db, organizationId, query, resolved, every, access),
        };
        keptPositions.set(key, kept);
      }
      // New events only push positions later: the one before the offset's, or the one before
      // it, starts at or before the page unless more events arrived than lie between two
      // positions.
      for (
        let k = Math.floor(query.offset / kept!.every) - 1, tries = 0;
        k >= 0 && tries < 2;
        k -= 1
      ) {
        tries += 1;
        const position = kept!.positions[k];
        if (!position) continue;
        const start =
          (k + 1) * kept!.every +
          (kept!.throughId === version.throughId
            ? 0
            : yield* newBefore(db, organizationId, query, resolved, kept!.throughId, position));
        if (start <= query.offset) {
          return { from: eventsAfter(db, query.order, position), skip: query.offset - start };
        }
      }
      return null;
    },
  };
}

/**
 * How a read kept at one version serves `version`: as is at the same one; brought up to date when
 * only events with higher ids (at most `maxNewIds` of them) were added since, which are never
 * added below the kept highest id (db/repositories/events.ts); read anew once retention removed
 * events since, further behind, or ahead (on PostgreSQL a request in an older snapshot may find
 * a read kept by a newer one).
 */
function keptUse(
  kept: EventsVersion | undefined,
  version: EventsVersion,
  maxNewIds: number,
): 'as is' | 'brought up to date' | 'read anew' {
  if (!kept || kept.removed !== version.removed) return 'read anew';
  const newIds = version.throughId - kept.throughId;
  if (newIds === 0) return 'as is';
  return newIds > 0 && newIds <= maxNewIds ? 'brought up to date' : 'read anew';
}

/** `hours` with the `touched` ones replaced by their counts read again (absent: none left). */
function mergeHours(
  hours: readonly HourCount[],
  touched: readonly string[],
  reread: readonly HourCount[],
): HourCount[] {
  const replaced = new Set(touched);
  const kept = hours.filter(({ hour }) => !replaced.has(hour));
  // New events fall mostly in the latest hours: both lists are sorted, so a merge keeps it so.
  const merged: HourCount[] = [];
  let i = 0;
  for (const hour of reread) {
    while (i < kept.length && kept[i]!.hour < hour.hour) merged.push(kept[i++]!);
    merged.push(hour);
  }
  return merged.concat(kept.slice(i));
}

/** The events list's memory of `db`'s reads in this thread. */
export const eventListMemory = perDatabase(keptReads);

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
