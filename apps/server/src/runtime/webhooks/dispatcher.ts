// The webhook dispatcher: one per server process, in its webhook thread (delivery-thread.ts).
// Each endpoint is served by exactly one process at a time, the holder of its lease in the
// database: every turn the dispatcher renews the leases it holds (an endpoint it no longer holds,
// deleted, disabled or changed by the API, stops within a second), takes free or lapsed ones up to
// its share, and lets each endpoint's worker take and store its work (endpoint-worker.ts).

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Db } from '../../db/engine/client.js';
import type { FeedEvent } from '../../db/repositories/events.js';
import { resumeTokensOf } from '../resume-tokens.js';
import {
  claimLeases,
  highestHistoryId,
  releaseLeases,
  renewLeases,
  sweepDeliveryLog,
  type LeasedEndpoint,
} from '../../db/repositories/webhook-dispatch.js';
import { EventFeed } from '../event-feed.js';
import { DELIVERY_LOG_RETENTION_MS, DeliveryClient } from './delivery-attempt.js';
import { EndpointWorker, type PositionTokens } from './endpoint-worker.js';
import type { TargetAddressSettings } from '../../domain/webhook-target-address.js';

export interface DispatcherOptions {
  db: Db;
  logger: Logger;
  /** WEBHOOK_LEASE_MS. */
  leaseMs: number;
  /** WEBHOOK_RETRY_SCHEDULE. */
  retrySchedule: readonly number[];
  targets: TargetAddressSettings;
  /** Endpoints one process serves at most; the others are left to other processes. */
  maxEndpoints?: number;
}

/** Each endpoint is a feed subscription and up to 8 attempts: a process serves this many at most. */
const MAX_ENDPOINTS = 1000;
/**
 * The longest pause between turns. An endpoint deleted, disabled or changed by the API stops at
 * the next turn's renewal: half the second the API promises, so that a turn slowed by a loaded
 * machine still ends within it (docs/benchmarks.md, "Figures behind the code").
 */
const MAX_TURN_MS = 500;
/**
 * How long after it was seen a history id is taken as settled: ids are taken when a change's
 * transaction writes and become visible when it commits, so a lower id may commit shortly after a
 * higher one on PostgreSQL; every change's transaction is short beside this.
 */
const HISTORY_SETTLE_MS = 2000;
const SWEEP_EVERY_MS = 3_600_000;
/** How long a stopping process lets attempts in flight finish before abandoning them. */
const STOP_GRACE_MS = 3000;

export class WebhookDispatcher {
  readonly #options: DispatcherOptions;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('base64url')}`;
  readonly #client: DeliveryClient;
  readonly #feed: EventFeed<readonly FeedEvent[]>;
  readonly #workers = new Map<number, EndpointWorker>();
  readonly #turnMs: number;
  /** Highest history ids seen, with when: the settled one is the latest seen HISTORY_SETTLE_MS ago. */
  #historySeen: Array<{ at: number; id: number }> = [];
  #settledHistoryId = 0;
  #lastRenewal = Date.now();
  #lastSweep = 0;
  #timer: NodeJS.Timeout | undefined;
  #turn: Promise<void> | undefined;
  #stopping = false;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#turnMs = Math.min(MAX_TURN_MS, Math.floor(options.leaseMs / 3));
    this.#client = new DeliveryClient(options.targets);
    // The feed's chunks are the events themselves: each worker builds its own messages.
    this.#feed = new EventFeed(options.db, { encode: (events) => events });
  }

  /** Endpoints this process serves now. */
  get size(): number {
    return this.#workers.size;
  }

  start(): void {
    this.#schedule(0);
  }

  /**
   * Stops delivering: attempts in flight get a moment to finish, positions are stored and the
   * leases given up, so another process takes over at once.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    await this.#turn;
    this.#feed.close();
    const workers = [...this.#workers.values()];
    this.#workers.clear();
    await Promise.all(workers.map((worker) => worker.stop(STOP_GRACE_MS)));
    try {
      for (const worker of workers) await worker.storePositions();
      await releaseLeases(this.#options.db, this.#owner);
    } catch (error) {
      // The leases lapse by themselves; what was not stored is sent again.
      this.#warn(error, 'webhook dispatcher could not hand its endpoints over');
    }
    await this.#client.close();
  }

  #schedule(delayMs: number): void {
    if (this.#stopping) return;
    this.#timer = setTimeout(() => {
      this.#turn = this.#takeTurn().finally(() => {
        this.#turn = undefined;
        this.#schedule(this.#turnMs);
      });
    }, delayMs);
  }

  async #takeTurn(): Promise<void> {
    const { db, leaseMs } = this.#options;
    const now = Date.now();
    const expiresAt = new Date(now + leaseMs).toISOString();
    try {
      await this.#watchHistory(now);
      const renewedAt = performance.now();
      const renewed = await renewLeases(db, this.#owner, expiresAt);
      this.#lastRenewal = now;
      await this.#serve(renewed);
      const room = (this.#options.maxEndpoints ?? MAX_ENDPOINTS) - this.#workers.size;
      if (room > 0) {
        const claimed = await claimLeases(
          db,
          this.#owner,
          new Date(now).toISOString(),
          expiresAt,
          room,
        );
        for (const endpoint of claimed) this.#startWorker(endpoint);
      }
      await Promise.all([...this.#workers.values()].map((worker) => worker.tick(now, renewedAt)));
      if (now - this.#lastSweep >= SWEEP_EVERY_MS) {
        this.#lastSweep = now;
        await sweepDeliveryLog(db, new Date(now - DELIVERY_LOG_RETENTION_MS).toISOString());
      }
    } catch (error) {
      this.#warn(error, 'webhook dispatcher turn failed');
      // Unable to renew for most of a lease: another process may take these endpoints over
      // soon, and two senders would only repeat messages. Stop until the database answers again.
      if (now - this.#lastRenewal > (leaseMs * 2) / 3) await this.#stopAll();
    }
  }

  /** Stops the workers of endpoints not renewed, and restarts those whose work went wrong. */
  async #serve(renewed: readonly LeasedEndpoint[]): Promise<void> {
    const held = new Map(renewed.map((endpoint) => [endpoint.id, endpoint]));
    const stopping: Array<Promise<void>> = [];
    for (const [id, worker] of this.#workers) {
      const endpoint = held.get(id);
      if (!endpoint || worker.broken || endpoint.updatedAt !== worker.endpoint.updatedAt) {
        this.#workers.delete(id);
        stopping.push(worker.stop(0));
      }
    }
    await Promise.all(stopping);
    for (const endpoint of renewed)
      if (!this.#workers.has(endpoint.id)) this.#startWorker(endpoint);
  }

  async #stopAll(): Promise<void> {
    const workers = [...this.#workers.values()];
    this.#workers.clear();
    await Promise.all(workers.map((worker) => worker.stop(0)));
  }

  #startWorker(endpoint: LeasedEndpoint): void {
    const { db, logger, retrySchedule } = this.#options;
    this.#workers.set(
      endpoint.id,
      new EndpointWorker(
        {
          db,
          feed: this.#feed,
          client: this.#client,
          owner: this.#owner,
          retrySchedule,
          tokens: this.#tokens,
          logger,
          settledHistoryId: () => this.#settledHistoryId,
        },
        endpoint,
      ),
    );
  }

  readonly #tokens: PositionTokens = {
    events: (organizationId, ids) => resumeTokensOf(this.#options.db).make(organizationId, ids),
    history: (organizationId, ids) =>
      resumeTokensOf(this.#options.db).make(organizationId, ids, 'history'),
  };

  async #watchHistory(now: number): Promise<void> {
    await resumeTokensOf(this.#options.db).ready();
    this.#historySeen.push({ at: now, id: await highestHistoryId(this.#options.db) });
    const settledAt = now - HISTORY_SETTLE_MS;
    const older = this.#historySeen.filter((seen) => seen.at <= settledAt);
    if (older.length > 0) this.#settledHistoryId = older.at(-1)!.id;
    // Kept: the newest settled one and those not settled yet.
    this.#historySeen = this.#historySeen.slice(Math.max(0, older.length - 1));
  }

  #warn(error: unknown, message: string): void {
    this.#options.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      message,
    );
  }
}
