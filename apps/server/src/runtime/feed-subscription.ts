// What the live events feed (event-feed.ts) is made with, and what a subscriber of it deals with:
// the sink it hands the feed, where it starts, the handle it gets back (and the feed's record of
// it), and why a subscription ends early.

import { databaseUnavailableReason, isQueryTimeout } from '../db/engine/errors.js';
import type { EventStreamQuery, FeedEvent } from '../db/repositories/events.js';
import type { EventReaders } from './event-readers.js';
import type { components } from '../spec-types.js';
import type { ReplicaReads } from './replica-reads.js';

export interface EventFeedOptions<Chunk> {
  /**
   * Turns an organization's events (their id and wire JSON) into what its sinks are sent; once
   * per batch and view.
   */
  encode: (events: readonly FeedEvent[], organizationId: number) => Chunk;
  /** How often new events are looked for; the delivery delay after a commit is at most this. */
  pollMs?: number;
  /** Events read per statement, by the watcher and by a replay. */
  batchSize?: number;
  /** SQLite's reader threads, where replays are read off the event loop. */
  readers?: EventReaders;
  /**
   * PostgreSQL's read replica: a replay is read there when the replica has replayed what the
   * primary held when the position it replays up to was read; the watcher reads the primary.
   */
  replica?: ReplicaReads;
}

/**
 * Why a subscription ended early; the subscriber hears it once, then nothing more. The codes are
 * the spec's `EventStreamError` codes that the feed itself gives (the key's loss is the stream's:
 * runtime/stream-key-watch.ts).
 */
export type FeedFailureCode = Extract<
  components['schemas']['EventStreamError']['code'],
  'SLOW_CONSUMER' | 'INTERNAL' | 'SERVICE_UNAVAILABLE' | 'GONE'
>;

export interface FeedFailure {
  code: FeedFailureCode;
  detail: string;
}

/** Where a subscriber receives its events. `Chunk` is what `encode` makes of a batch. */
export interface FeedSink<Chunk> {
  /**
   * The next events in commit order, encoded; never called with an empty batch. False ends the
   * subscription: the sink could not take them and has told its client why.
   */
  send(chunk: Chunk): boolean;
  /**
   * Resolves once the sink can take more, with about how many bytes of events it can take: a
   * replay reads its next batch only then, and no more than that (Infinity: no limit).
   */
  ready(): Promise<number>;
  /** The subscription ended because of `failure`; nothing follows. */
  fail(failure: FeedFailure): void;
  /** The feed closed (the process is shutting down); nothing follows. */
  end(): void;
}

/**
 * Where a subscription starts: after an event id (0: from the first kept event), or after what is
 * committed now. A subscription ends with GONE once retention removes an event it had not been
 * sent yet, unless it `skipsRemoved` (a webhook endpoint: it cannot start again from a time, and
 * its removed events are gone for every reader).
 */
export type FeedStart = { afterId: number; skipsRemoved?: boolean } | 'now';

/** What a subscriber hears when retention removed events it had not been sent yet. */
export const REMOVED_BEFORE_SENT: FeedFailure = {
  code: 'GONE',
  detail:
    'Event retention removed events this stream had not sent yet, so it cannot go on without a gap; open it again without Last-Event-ID and with start_datetime to replay the events that are kept.',
};

export interface Subscription {
  /** Every matching event with an id at or below this has been sent. */
  readonly position: number;
  /** Stops the subscription; the sink hears nothing more. */
  close(): void;
}

/** The feed's record of a subscription. */
export interface Subscriber<Chunk> extends Subscription {
  position: number;
  /**
   * Removals of events with ids at or below this are none of its concern (they came before its
   * start); one above it and above its position is a gap. Infinity: it skips removed events.
   */
  readonly removalsFrom: number;
  readonly organizationId: number;
  readonly query: EventStreamQuery;
  readonly sink: FeedSink<Chunk>;
  /** Search pairs and window: subscribers with the same one share each batch's match. */
  readonly selectionKey: string | null;
  /** The projection: subscribers with the same view share each batch's encoding. */
  readonly viewKey: string;
  live: boolean;
  closed: boolean;
  /** Its chunks waiting in the feed's delivery queue. */
  queued: number;
  /** Resolves the replay that waits until nothing of the subscriber is queued. */
  delivered: (() => void) | undefined;
  /** The average size of an event the subscriber has replayed (its wire JSON's length). */
  eventBytes: number;
}

/** What a subscriber hears when reading its events failed with `error`. */
export function failureOf(error: unknown): FeedFailure {
  const unavailable = databaseUnavailableReason(error);
  if (unavailable) {
    return {
      code: 'SERVICE_UNAVAILABLE',
      detail: `The service cannot read events right now: ${unavailable}. Reconnect later with the last event id received; nothing is lost.`,
    };
  }
  if (isQueryTimeout(error)) {
    return {
      code: 'INTERNAL',
      detail:
        'Replaying the events this stream asked for took longer than the list query timeout; reconnect with the last event id received, or narrow the search.',
    };
  }
  return {
    code: 'INTERNAL',
    detail:
      'Something went wrong on our side while reading events; reconnect with the last event id received.',
  };
}

/**
 * The first of `events` that fit in `room` bytes (at least one, so a replay always moves on), and
 * their average size (their wire JSON's length; 0 for no events).
 */
export function fittingEvents(
  events: FeedEvent[],
  room: number,
): { events: FeedEvent[]; averageBytes: number } {
  let bytes = 0;
  let kept = 0;
  for (const { json } of events) {
    if (kept > 0 && bytes + json.length > room) break;
    bytes += json.length;
    kept += 1;
  }
  return {
    events: kept === events.length ? events : events.slice(0, kept),
    averageBytes: kept > 0 ? Math.max(1, Math.ceil(bytes / kept)) : 0,
  };
}
