// Delivery for one endpoint while this process holds its lease: its events come from the
// process's event feed (a subscription from the endpoint's stored position, with its search
// pairs), its experiment status changes from the history, its retries and test messages from
// webhook_messages. Up to 8 messages are in flight; what waits besides them is at most one batch
// of the feed. A message is handled once delivered or once its retry is stored; the stored
// positions move up to the highest id below which every message is handled, so a process that
// dies loses nothing and the next holder only sends some messages again.

import type { Logger } from 'pino';
import type { Db } from '../../db/engine/client.js';
import { currentEventPosition, type FeedEvent } from '../../db/repositories/events.js';
import {
  advancePosition,
  dueMessages,
  holdsLease,
  statusChangesAfter,
  type LeasedEndpoint,
} from '../../db/repositories/webhook-dispatch.js';
import { EVENT_LIST } from '../../domain/events.js';
import { parseListQuery } from '../../domain/list-query.js';
import { cursorSigner } from '../cursor-signer.js';
import type { EventFeed } from '../event-feed.js';
import type { FeedSink, Subscription } from '../feed-subscription.js';
import {
  eventPayload,
  HandledThrough,
  STATUS_CHANGED,
  statusChangePayload,
  storeOutcome,
  webhookIdOf,
  type DeliveryClient,
  type SigningSecrets,
  type WorkItem,
} from './delivery-attempt.js';

/** Messages of one endpoint in flight at once. */
export const MAX_IN_FLIGHT = 8;
/** Events a replay of the feed hands over at once, about. */
const EVENTS_PER_BATCH = 100;
const FIRST_EVENT_BYTES = 1024;

/** The opaque position tokens of an organization's events and history entries. */
export interface PositionTokens {
  events(organizationId: number, ids: readonly number[]): string[];
  history(organizationId: number, ids: readonly number[]): string[];
}

/** What every worker of a dispatcher shares. */
export interface WorkerContext {
  db: Db;
  feed: EventFeed<readonly FeedEvent[]>;
  client: DeliveryClient;
  owner: string;
  retrySchedule: readonly number[];
  tokens: PositionTokens;
  logger: Logger;
  /** History ids at or below this are committed, or never will be (the dispatcher's watch). */
  settledHistoryId(): number;
}

export class EndpointWorker {
  readonly endpoint: LeasedEndpoint;
  readonly #context: WorkerContext;
  readonly #events: HandledThrough;
  readonly #history: HandledThrough;
  readonly #stored = { event: 0, history: 0 };
  readonly #queue: WorkItem[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  /** Stored messages in flight, left out of the next read of due ones. */
  readonly #storedInFlight = new Set<number>();
  readonly #abandon = new AbortController();
  #queuedEvents = 0;
  #eventBytes = FIRST_EVENT_BYTES;
  #subscription: Subscription | undefined;
  /** Counts subscriptions, so a sink of an ended one is told apart from the current one's. */
  #generation = 0;
  #subscribing = false;
  #roomWaiter: (() => void) | undefined;
  /**
   * When the lease was last known held (performance.now() at the check's start): every API change
   * to the endpoint clears it, so nothing read after a delete or an update is sent on old terms.
   */
  #leaseHeldAt = Number.NEGATIVE_INFINITY;
  /** What the current turn's reads count as their time: they follow its renewal. */
  #tickStartedAt = Number.NEGATIVE_INFINITY;
  #confirmingLease = false;
  #stopped = false;
  /** A write failed: the dispatcher starts the endpoint again from its stored positions. */
  broken = false;

  constructor(context: WorkerContext, endpoint: LeasedEndpoint) {
    this.#context = context;
    this.endpoint = endpoint;
    this.#events = new HandledThrough(endpoint.eventPosition);
    this.#history = new HandledThrough(endpoint.historyPosition);
    this.#stored.event = endpoint.eventPosition;
    this.#stored.history = endpoint.historyPosition;
  }

  get #wantsEvents(): boolean {
    return this.endpoint.messageTypes.includes('event');
  }

  get #wantsStatusChanges(): boolean {
    return this.endpoint.messageTypes.includes(STATUS_CHANGED);
  }

  /** Room for more messages beside those queued and in flight. */
  get #room(): number {
    return MAX_IN_FLIGHT - this.#inFlight.size - this.#queue.length;
  }

  /**
   * One turn of the dispatcher's loop: resubscribe if the feed dropped us, take due retries and
   * status changes, and store how far delivery got.
   */
  async tick(now: number, renewedAt: number): Promise<void> {
    if (this.#stopped || this.broken) return;
    this.#leaseHeldAt = Math.max(this.#leaseHeldAt, renewedAt);
    this.#tickStartedAt = renewedAt;
    try {
      if (this.#wantsEvents) {
        if (!this.#subscription && this.#queuedEvents === 0) await this.#subscribe();
      } else {
        this.#events.passOver(
          await currentEventPosition(this.#context.db, this.endpoint.organizationId),
        );
      }
      await this.#takeStored(now);
      await this.#takeStatusChanges();
      await this.storePositions();
    } catch (error) {
      this.#fail(error, 'could not read or store its deliveries');
    }
  }

  /**
   * Stops: nothing new starts; in-flight attempts get `graceMs` to finish, then are abandoned
   * (not handled, so whoever holds the endpoint next sends them again).
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    this.#subscription?.close();
    this.#subscription = undefined;
    this.#roomWaiter?.();
    this.#queue.length = 0;
    if (graceMs > 0 && this.#inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled(this.#inFlight),
        new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(timer);
    }
    this.#abandon.abort();
    await Promise.allSettled(this.#inFlight);
  }

  /**
   * Stores positions that moved, each only if still held and not moved by anyone else. Each is
   * tried on its own: a replay may rewind one kind only, and the other's progress still counts.
   */
  async storePositions(): Promise<void> {
    if (this.broken) return;
    let moved = false;
    for (const [column, key, tracker] of [
      ['event_position', 'event', this.#events],
      ['history_position', 'history', this.#history],
    ] as const) {
      const through = tracker.through;
      if (through <= this.#stored[key]) continue;
      const { db, owner } = this.#context;
      if (await advancePosition(db, this.endpoint.id, owner, column, this.#stored[key], through)) {
        this.#stored[key] = through;
      } else {
        moved = true;
      }
    }
    // Taken over or rewound (a replay): the dispatcher's next renewal tells which.
    if (moved) this.broken = true;
  }

  async #subscribe(): Promise<void> {
    if (this.#subscribing) return;
    this.#subscribing = true;
    try {
      const { db, feed } = this.#context;
      const { organizationId, searchFields, searchFieldValues } = this.endpoint;
      const query = await parseListQuery(
        EVENT_LIST,
        {
          page: 0,
          limit: 0,
          search_fields: searchFields,
          search_field_values: searchFieldValues,
          fields: [],
        },
        organizationId,
        await cursorSigner(db),
      );
      if (this.#stopped) return;
      this.#generation += 1;
      const subscription = await feed.subscribe(
        organizationId,
        query,
        // Retention's removals are skipped: the endpoint cannot start again from a time, and
        // an event removed before its delivery is gone for every reader.
        { afterId: this.#events.received, skipsRemoved: true },
        this.#sink(this.#generation),
      );
      if (this.#stopped) subscription.close();
      else this.#subscription = subscription;
    } finally {
      this.#subscribing = false;
    }
  }

  #sink(generation: number): FeedSink<readonly FeedEvent[]> {
    const ended = () => {
      if (generation === this.#generation) this.#subscription = undefined;
    };
    return {
      send: (events) => {
        // A live batch while the last one still waits: refused, so what waits stays one batch;
        // the next tick subscribes again from the last event taken in.
        if (this.#stopped || this.#queuedEvents > 0) {
          ended();
          return false;
        }
        this.#takeEvents(events);
        return true;
      },
      ready: () =>
        new Promise<number>((resolve) => {
          const room = () => resolve(EVENTS_PER_BATCH * this.#eventBytes);
          if (this.#queuedEvents === 0 || this.#stopped) room();
          else this.#roomWaiter = room;
        }),
      fail: (failure) => {
        this.#context.logger.warn(
          { endpointId: this.endpoint.id, code: failure.code },
          'webhook endpoint lost its event feed; subscribing again',
        );
        ended();
      },
      end: ended,
    };
  }

  #takeEvents(events: readonly FeedEvent[]): void {
    const { id: endpointId, organizationId } = this.endpoint;
    const positions = this.#context.tokens.events(
      organizationId,
      events.map((event) => event.id),
    );
    let bytes = 0;
    events.forEach(({ id, json }, index) => {
      bytes += json.length;
      this.#events.take(id);
      this.#queue.push({
        source: 'event',
        sourceId: id,
        webhookId: webhookIdOf(endpointId, 'event', id),
        type: 'event',
        position: positions[index]!,
        payload: eventPayload(positions[index]!, json),
        attemptsMade: 0,
        takenAt: performance.now(),
      });
    });
    this.#queuedEvents += events.length;
    if (events.length > 0) this.#eventBytes = Math.max(1, Math.ceil(bytes / events.length));
    this.#pump();
  }

  async #takeStored(now: number): Promise<void> {
    if (this.#room <= 0) return;
    const due = await dueMessages(
      this.#context.db,
      this.endpoint.id,
      new Date(now).toISOString(),
      [...this.#storedInFlight],
      this.#room,
    );
    for (const message of due) {
      if (this.#stopped) return;
      this.#storedInFlight.add(message.id);
      this.#queue.push({
        source: 'stored',
        sourceId: message.id,
        webhookId: message.webhookId,
        type: message.type,
        position: message.position,
        payload: message.payload,
        attemptsMade: message.attempts,
        takenAt: this.#tickStartedAt,
      });
    }
    this.#pump();
  }

  async #takeStatusChanges(): Promise<void> {
    const settled = this.#context.settledHistoryId();
    if (!this.#wantsStatusChanges) {
      this.#history.passOver(settled);
      return;
    }
    const room = this.#room;
    if (room <= 0 || this.#history.received >= settled) return;
    const { id: endpointId, organizationId } = this.endpoint;
    const changes = await statusChangesAfter(
      this.#context.db,
      organizationId,
      this.#history.received,
      settled,
      room,
    );
    if (this.#stopped) return;
    const positions = this.#context.tokens.history(
      organizationId,
      changes.map((change) => change.id),
    );
    changes.forEach((change, index) => {
      this.#history.take(change.id);
      this.#queue.push({
        source: 'history',
        sourceId: change.id,
        webhookId: webhookIdOf(endpointId, 'history', change.id),
        type: STATUS_CHANGED,
        position: positions[index]!,
        payload: statusChangePayload(positions[index]!, change),
        attemptsMade: 0,
        takenAt: this.#tickStartedAt,
      });
    });
    if (changes.length < room) this.#history.passOver(settled);
    this.#pump();
  }

  #pump(): void {
    while (!this.#stopped && this.#inFlight.size < MAX_IN_FLIGHT && this.#queue.length > 0) {
      if (this.#queue[0]!.takenAt > this.#leaseHeldAt) {
        this.#confirmLease();
        break;
      }
      const item = this.#queue.shift()!;
      if (item.source === 'event') this.#queuedEvents -= 1;
      const attempt: Promise<void> = this.#deliver(item).finally(() => {
        this.#inFlight.delete(attempt);
        this.#pump();
      });
      this.#inFlight.add(attempt);
    }
    if (this.#queuedEvents === 0 && this.#roomWaiter) {
      const wake = this.#roomWaiter;
      this.#roomWaiter = undefined;
      wake();
    }
  }

  /** Checks the lease once for everything read so far; sends on if held, stops if not. */
  #confirmLease(): void {
    if (this.#confirmingLease) return;
    this.#confirmingLease = true;
    const startedAt = performance.now();
    holdsLease(this.#context.db, this.endpoint.id, this.#context.owner)
      .then(
        (held) => {
          if (held) {
            this.#leaseHeldAt = Math.max(this.#leaseHeldAt, startedAt);
          } else {
            // Deleted, disabled or changed: nothing more goes out on these terms.
            this.#stopped = true;
            this.#abandon.abort();
          }
        },
        (error: unknown) => this.#fail(error, 'could not check its lease'),
      )
      .finally(() => {
        this.#confirmingLease = false;
        this.#pump();
      });
  }

  #secrets(now: number): SigningSecrets {
    const { secret, previousSecret, previousSecretExpiresAt } = this.endpoint;
    const previousValid =
      previousSecret !== null &&
      previousSecretExpiresAt !== null &&
      Date.parse(previousSecretExpiresAt) > now;
    return { current: secret, previous: previousValid ? previousSecret : null };
  }

  async #deliver(item: WorkItem): Promise<void> {
    const { db, client, retrySchedule } = this.#context;
    const result = await client.attempt(
      this.endpoint.url,
      { webhookId: item.webhookId, payload: item.payload },
      this.#secrets(Date.now()),
      this.#abandon.signal,
    );
    if (this.#abandon.signal.aborted) return;
    try {
      const disabled = await storeOutcome(db, retrySchedule, this.endpoint, item, result);
      if (item.source === 'event') this.#events.done(item.sourceId);
      else if (item.source === 'history') this.#history.done(item.sourceId);
      else this.#storedInFlight.delete(item.sourceId);
      if (disabled && !this.#stopped) {
        this.#context.logger.warn({ endpointId: this.endpoint.id }, 'webhook endpoint disabled');
        this.#stopped = true;
        this.#abandon.abort();
      }
    } catch (error) {
      this.#fail(error, 'could not store a delivery attempt');
    }
  }

  #fail(error: unknown, what: string): void {
    if (this.#stopped) return;
    this.broken = true;
    this.#context.logger.warn(
      { endpointId: this.endpoint.id, err: error instanceof Error ? error.message : String(error) },
      `webhook endpoint ${what}; starting it again from its stored positions`,
    );
  }
}
