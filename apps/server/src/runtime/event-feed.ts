// One watcher per process for the live events feed (GET /api/v1/events/stream and `agentline
// events tail`): every open stream subscribes here, and the watcher reads the new events of all
// watched organizations together once per tick and hands them to every subscriber
// (docs/architecture.md, "The live event feed").

import type { Db } from '../db/engine/client.js';
import type { ReplicaReads } from './replica-reads.js';
import {
  currentEventPosition,
  type EventStreamQuery,
  type FeedEvent,
} from '../db/repositories/events.js';
import { replayEvents, type EventReaders } from './event-readers.js';
import { eventsRemovedThrough } from '../db/repositories/event-retention.js';
import {
  matchingEventIdsOf,
  readNewEvents,
  type MatchJob,
} from '../db/repositories/event-feed-reads.js';
import {
  failureOf,
  fittingEvents,
  REMOVED_BEFORE_SENT,
  type FeedFailure,
  type FeedSink,
  type EventFeedOptions,
  type FeedStart,
  type Subscriber,
  type Subscription,
} from './feed-subscription.js';
import {
  FIRST_EVENT_BYTES,
  REPLAY_BATCH_BYTES,
  REPLAY_SPAN,
  replayTurn,
} from './replay-batches.js';
import { EventProperties } from '../generated/enum-values.js';

interface WatchedOrganization<Chunk> {
  readonly organizationId: number;
  /** Every event of the organization at or below it has been read (null: still being found). */
  position: number | null;
  /** When (performance.now()) the read that found `position` had ended. */
  positionReadAt: number;
  ready: Promise<void>;
  subscribers: Set<Subscriber<Chunk>>;
}

const DEFAULT_POLL_MS = 200;
export const DEFAULT_BATCH_SIZE = 1000;
/**
 * Sends handed to sinks per turn of the event loop. Each send ends in a socket write of the
 * whole batch; a thousand of them in one turn would hold every other request of the process
 * until all are written.
 */
const SENDS_PER_TURN = 50;

/** The events a view shows: each one's wire object narrowed to the projection, in wire order. */
function project(events: readonly FeedEvent[], projection: ReadonlySet<string> | null) {
  if (!projection) return events;
  const kept = EventProperties.filter((property) => projection.has(property));
  return events.map(({ id, json }) => {
    const whole = JSON.parse(json) as Record<string, unknown>;
    return {
      id,
      json: JSON.stringify(Object.fromEntries(kept.map((key) => [key, whole[key]]))),
    } as FeedEvent;
  });
}

export class EventFeed<Chunk> {
  readonly #db: Db;
  readonly #encode: (events: readonly FeedEvent[], organizationId: number) => Chunk;
  readonly #pollMs: number;
  readonly #batchSize: number;
  readonly #readers: EventReaders | undefined;
  readonly #replica: ReplicaReads | undefined;
  readonly #watched = new Map<number, WatchedOrganization<Chunk>>();
  #timer: NodeJS.Timeout | undefined;
  #ticking = false;
  #closed = false;
  /** Chunks to hand to sinks, in the order they were sent: a few per turn (SENDS_PER_TURN). */
  readonly #deliveries: Array<{ subscriber: Subscriber<Chunk>; chunk: Chunk }> = [];
  #delivering = false;

  constructor(db: Db, options: EventFeedOptions<Chunk>) {
    this.#db = db;
    this.#encode = options.encode;
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.#batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.#readers = options.readers;
    this.#replica = options.replica;
  }

  /** Open subscriptions, all organizations together. */
  get size(): number {
    let size = 0;
    for (const watched of this.#watched.values()) size += watched.subscribers.size;
    return size;
  }

  /**
   * Subscribes `sink` to the organization's events that match `query`, from `start`. Resolves
   * once the starting position is known; events follow through the sink.
   */
  async subscribe(
    organizationId: number,
    query: EventStreamQuery,
    start: FeedStart,
    sink: FeedSink<Chunk>,
  ): Promise<Subscription> {
    const position =
      start === 'now' ? await currentEventPosition(this.#db, organizationId) : start.afterId;
    // From the first kept event, what was removed before the start is not missed.
    const removalsFrom =
      start !== 'now' && start.skipsRemoved
        ? Infinity
        : position === 0
          ? await eventsRemovedThrough(this.#db, organizationId)
          : position;
    const selected = query.filters.length > 0 || query.window.start !== undefined;
    const subscriber: Subscriber<Chunk> = {
      position,
      removalsFrom,
      organizationId,
      query,
      sink,
      selectionKey: selected ? JSON.stringify([query.filters, query.window]) : null,
      viewKey: query.projection ? [...query.projection].sort().join(',') : '',
      live: false,
      closed: false,
      queued: 0,
      delivered: undefined,
      eventBytes: FIRST_EVENT_BYTES,
      close: () => this.#remove(subscriber),
    };
    if (this.#closed) {
      subscriber.closed = true;
      sink.end();
      return subscriber;
    }
    const watched = this.#watch(organizationId);
    watched.subscribers.add(subscriber);
    void watched.ready.then(
      () => this.#catchUp(subscriber),
      (error: unknown) => this.#fail(subscriber, failureOf(error)),
    );
    return subscriber;
  }

  /** Ends every subscription (their sinks hear `end`) and stops watching. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const watched of this.#watched.values()) {
      for (const subscriber of watched.subscribers) {
        subscriber.closed = true;
        subscriber.sink.end();
      }
    }
    this.#watched.clear();
  }

  #watch(organizationId: number): WatchedOrganization<Chunk> {
    let watched = this.#watched.get(organizationId);
    if (!watched) {
      const entry: WatchedOrganization<Chunk> = {
        organizationId,
        position: null,
        positionReadAt: 0,
        subscribers: new Set(),
        ready: currentEventPosition(this.#db, organizationId).then((position) => {
          entry.position = position;
          entry.positionReadAt = performance.now();
        }),
      };
      // A failure reaches each subscriber through `ready`; the watcher drops the organization.
      entry.ready.catch(() => this.#watched.delete(organizationId));
      this.#watched.set(organizationId, entry);
      watched = entry;
    }
    this.#schedule();
    return watched;
  }

  #remove(subscriber: Subscriber<Chunk>): void {
    subscriber.closed = true;
    subscriber.delivered?.();
    const watched = this.#watched.get(subscriber.organizationId);
    if (!watched) return;
    watched.subscribers.delete(subscriber);
    if (watched.subscribers.size === 0) this.#watched.delete(subscriber.organizationId);
  }

  #fail(subscriber: Subscriber<Chunk>, failure: FeedFailure): void {
    if (subscriber.closed) return;
    this.#remove(subscriber);
    subscriber.sink.fail(failure);
  }

  /**
   * Queues `chunk` for the subscriber's sink. Every send goes through the one queue, so each
   * subscriber's chunks arrive in the order they were sent, replays and live batches alike.
   */
  #send(subscriber: Subscriber<Chunk>, chunk: Chunk): void {
    subscriber.queued += 1;
    this.#deliveries.push({ subscriber, chunk });
    if (this.#delivering) return;
    this.#delivering = true;
    setImmediate(() => this.#deliver());
  }

  #deliver(): void {
    for (const { subscriber, chunk } of this.#deliveries.splice(0, SENDS_PER_TURN)) {
      subscriber.queued -= 1;
      if (!subscriber.closed && !subscriber.sink.send(chunk)) this.#remove(subscriber);
      if (subscriber.queued === 0) subscriber.delivered?.();
    }
    if (this.#deliveries.length > 0) setImmediate(() => this.#deliver());
    else this.#delivering = false;
  }

  /** Replays the subscriber up to the watcher's position, then makes it live. */
  async #catchUp(subscriber: Subscriber<Chunk>): Promise<void> {
    try {
      for (;;) {
        if (subscriber.closed) return;
        const watched = this.#watched.get(subscriber.organizationId);
        if (!watched || watched.position === null) return;
        // Taken together: the replay reads up to `through` where every event up to it is.
        const { position: through, positionReadAt } = watched;
        if (subscriber.position >= through) {
          // The watcher's next batch starts at `through`: from here on it feeds this subscriber.
          subscriber.live = true;
          return;
        }
        // A replay goes at the client's pace; live batches do not wait (send may refuse them).
        // Its previous batch is handed over first, so the sink's room counts it, and other
        // requests get a turn of the event loop between two batches.
        await this.#delivered(subscriber);
        const room = Math.min(REPLAY_BATCH_BYTES, await subscriber.sink.ready());
        if (subscriber.closed) return;
        // One at most a batch of ids behind the watcher (a stream that opened now, a live one
        // that missed a batch) is as good as live: it does not wait behind replays from far back.
        const batch = () => this.#replayBatch(subscriber, through, positionReadAt, room);
        const going =
          through - subscriber.position > this.#batchSize ? await replayTurn(batch) : await batch();
        if (!going) return;
      }
    } catch (error) {
      this.#fail(subscriber, failureOf(error));
    }
  }

  /**
   * Reads, encodes and sends the subscriber's next batch of at most `room` bytes, up to `through`
   * at most. False: the subscription ended meanwhile.
   */
  async #replayBatch(
    subscriber: Subscriber<Chunk>,
    through: number,
    positionReadAt: number,
    room: number,
  ): Promise<boolean> {
    // It may have closed while it waited for its turn.
    if (subscriber.closed) return false;
    const upTo = Math.min(through, subscriber.position + REPLAY_SPAN);
    const limit = Math.max(1, Math.min(this.#batchSize, Math.floor(room / subscriber.eventBytes)));
    const read = await replayEvents(
      this.#replica?.dbFor(positionReadAt) ?? this.#db,
      {
        organizationId: subscriber.organizationId,
        query: subscriber.query,
        afterId: subscriber.position,
        throughId: upTo,
        limit,
      },
      this.#readers,
    );
    if (subscriber.closed) return false;
    // Read after the batch: a removal above the position before it would be a gap in it.
    if (
      this.#missedRemoval(
        subscriber,
        await eventsRemovedThrough(this.#db, subscriber.organizationId),
      )
    ) {
      this.#fail(subscriber, REMOVED_BEFORE_SENT);
      return false;
    }
    const { events, averageBytes } = fittingEvents(read, room);
    if (averageBytes > 0) subscriber.eventBytes = averageBytes;
    if (events.length > 0) {
      this.#send(subscriber, this.#encode(events, subscriber.organizationId));
    }
    subscriber.position =
      events.length < read.length || read.length === limit ? events.at(-1)!.id : upTo;
    return true;
  }

  /** Whether retention removed, by `removedThrough`, an event the subscriber was not sent. */
  #missedRemoval(subscriber: Subscriber<Chunk>, removedThrough: number): boolean {
    return removedThrough > Math.max(subscriber.removalsFrom, subscriber.position);
  }

  /** Resolves once none of the subscriber's chunks wait in the delivery queue. */
  #delivered(subscriber: Subscriber<Chunk>): Promise<void> {
    if (subscriber.queued === 0 || subscriber.closed) return Promise.resolve();
    return new Promise((resolve) => {
      subscriber.delivered = () => {
        subscriber.delivered = undefined;
        resolve();
      };
    });
  }

  #schedule(): void {
    if (this.#closed || this.#ticking || this.#timer || this.#watched.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#tick();
    }, this.#pollMs);
  }

  async #tick(): Promise<void> {
    this.#ticking = true;
    let reading = [...this.#watched.values()].filter((watched) => watched.position !== null);
    try {
      while (reading.length > 0) reading = await this.#advance(reading);
    } catch (error) {
      // One read serves every organization: its failure ends their streams, which resume.
      const failure = failureOf(error);
      for (const { subscribers } of reading) for (const s of subscribers) this.#fail(s, failure);
    } finally {
      this.#ticking = false;
      this.#schedule();
    }
  }

  /**
   * Reads the organizations' new events, all together, and hands them to their live subscribers.
   * Returns the organizations whose read stopped at its limit, to read again at once.
   */
  async #advance(reading: Array<WatchedOrganization<Chunk>>) {
    const froms = reading.map((watched) => watched.position!);
    const batches = await readNewEvents(
      this.#db,
      reading.map(({ organizationId, subscribers }, index) => ({
        organizationId,
        afterId: froms[index]!,
        // Only streams mind removals: a watcher of webhook endpoints alone skips that read.
        withRemovals: [...subscribers].some((s) => s.live && s.removalsFrom !== Infinity),
      })),
      this.#batchSize,
    );
    const readAt = performance.now();
    // One match per organization and selection among the live subscribers, all in one statement.
    const jobs: Array<MatchJob & { index: number; key: string }> = [];
    reading.forEach(({ organizationId, subscribers }, index) => {
      const { rows, through: throughId } = batches[index]!;
      const keys = new Set<string>();
      for (const { live, selectionKey: key, query } of rows.length > 0 ? subscribers : []) {
        if (!live || key === null || keys.has(key)) continue;
        keys.add(key);
        jobs.push({ index, key, organizationId, query, afterId: froms[index]!, throughId });
      }
    });
    if (this.#closed) return [];
    const matched = await matchingEventIdsOf(this.#db, jobs);
    if (this.#closed) return [];
    const matches = reading.map(() => new Map<string, Set<number>>());
    jobs.forEach(({ index, key }, job) => matches[index]!.set(key, matched[job]!));
    // From here to the end of the fan-out nothing awaits: a subscriber that turns live in
    // between sees the watcher's position either before or after this batch, never half.
    return reading.filter((watched, index) => {
      const { rows, through, more, removedThrough } = batches[index]!;
      for (const subscriber of watched.subscribers) {
        if (subscriber.live && this.#missedRemoval(subscriber, removedThrough)) {
          this.#fail(subscriber, REMOVED_BEFORE_SENT);
        }
      }
      const from = froms[index]!;
      if (through === from) return false;
      watched.position = through;
      watched.positionReadAt = readAt;
      this.#fanOut(watched, rows, from, through, matches[index]!);
      return more;
    });
  }

  #fanOut(
    watched: WatchedOrganization<Chunk>,
    rows: readonly FeedEvent[],
    from: number,
    through: number,
    matches: ReadonlyMap<string, ReadonlySet<number>>,
  ): void {
    // Subscribers at the batch's start with the same selection and view get the same chunk.
    const shared = new Map<string, Chunk | null>();
    for (const subscriber of watched.subscribers) {
      if (!subscriber.live) continue;
      const match = subscriber.selectionKey === null ? null : matches.get(subscriber.selectionKey);
      if (subscriber.position < from || (rows.length > 0 && match === undefined)) {
        // It missed a batch or has no match for this one (it turned live after the match was
        // read): it replays up to the watcher's position and turns live again.
        subscriber.live = false;
        void this.#catchUp(subscriber);
        continue;
      }
      const selected = (after: number) =>
        rows.filter((row) => row.id > after && (!match || match.has(row.id)));
      if (subscriber.position === from) {
        const key = `${subscriber.selectionKey}\n${subscriber.viewKey}`;
        let chunk = shared.get(key);
        if (chunk === undefined) {
          const events = project(selected(from), subscriber.query.projection);
          chunk = events.length > 0 ? this.#encode(events, subscriber.organizationId) : null;
          shared.set(key, chunk);
        }
        if (chunk !== null) this.#send(subscriber, chunk);
      } else {
        const events = project(selected(subscriber.position), subscriber.query.projection);
        if (events.length > 0) {
          this.#send(subscriber, this.#encode(events, subscriber.organizationId));
        }
      }
      subscriber.position = Math.max(subscriber.position, through);
    }
  }
}
