// Admission's HTTP side: every /api/v1 request of an operation enters its key's admission queue
// (runtime/admission.ts) after `authorize`, and a refusal is answered 429 with what to change;
// which operations are the spec's paged lists, which a queue counts apart.

import type { MiddlewareHandler } from 'hono';
import { routes } from '../generated/routes.js';
import { AdmissionQueue, type AdmissionLimits, type Refusal } from '../runtime/admission.js';
import type { AppEnv } from './app-env.js';
import { ApiError, ClientAbortError } from './errors.js';
import { setEnvelopeHeader } from './request-context.js';

/** How long the request waited for a slot, in whole milliseconds, on every /api/v1 answer. */
export const QUEUE_WAIT_HEADER = 'X-Queue-Wait-Ms';

/** The paged lists of the spec: the operations that take its `cursor` parameter. */
const LIST_READS: ReadonlySet<string> = new Set(
  Object.values(routes)
    .filter(
      (route) => 'request' in route && 'query' in route.request && hasCursor(route.request.query),
    )
    .map((route) => route.operationId),
);

function hasCursor(query: unknown): boolean {
  return typeof query === 'object' && query !== null && 'shape' in query
    ? Object.hasOwn(query.shape as object, 'cursor')
    : false;
}

/** Whether `operationId` names a paged list of the spec. */
export function isListRead(operationId: string): boolean {
  return LIST_READS.has(operationId);
}

/**
 * Never queued: an event stream is open for hours, holding its connection but no database
 * connection; EVENT_STREAMS_PER_KEY bounds a key's streams instead.
 */
const UNQUEUED: ReadonlySet<string> = new Set(['events_stream']);

/** A request refused for a full line may try again as soon as the line moves: within a second. */
const FULL_LINE_RETRY_AFTER_SECONDS = 1;

/** The middleware of one app instance's admission queue (runtime/admission.ts). */
export class Admission {
  readonly #queue: AdmissionQueue;

  constructor(readonly limits: AdmissionLimits) {
    this.#queue = new AdmissionQueue(limits);
  }

  /** Requests of every key in progress now. */
  get running(): number {
    return this.#queue.running;
  }

  /** Requests of every key waiting for a slot now. */
  get waiting(): number {
    return this.#queue.waiting;
  }

  /** Runs after `authorize`, which names the operation; a path of no operation passes. */
  middleware(): MiddlewareHandler<AppEnv> {
    return async (c, next) => {
      const operationId = c.get('operationId');
      if (operationId === undefined || UNQUEUED.has(operationId)) return next();
      const { keyId } = c.get('auth');
      const listRead = isListRead(operationId);
      const entry = await this.#queue.enter(keyId, listRead, () => c.req.raw.signal);
      // Rounded up: 0 means the request did not wait at all.
      if (entry.waitedMs > 0) {
        setEnvelopeHeader(c, QUEUE_WAIT_HEADER, String(Math.ceil(entry.waitedMs)));
      }
      if (!entry.admitted) throw this.#refusal(entry.refusal, listRead);
      try {
        await next();
      } finally {
        this.#queue.leave(keyId, listRead);
      }
    };
  }

  #refusal(refusal: Refusal, listRead: boolean): Error {
    switch (refusal.kind) {
      case 'line full':
        return this.#lineFull(listRead);
      case 'waited too long':
        return this.#waitedTooLong(listRead);
      case 'client left':
        return new ClientAbortError(refusal.reason);
    }
  }

  /** The share a request of this kind waits for, in words (this process's part of it). */
  #share(listRead: boolean): string {
    const { requestsPerKey, listReadsPerKey } = this.limits;
    return listRead && listReadsPerKey > 0
      ? `its ${this.#queue.part(listReadsPerKey)} list reads at once (CONCURRENT_LIST_READS_PER_KEY)`
      : `its ${this.#queue.part(requestsPerKey)} requests in progress at once (CONCURRENT_REQUESTS_PER_KEY)`;
  }

  #lineFull(listRead: boolean): ApiError {
    return new ApiError(
      'RATE_LIMITED',
      `The queue of this API key on this server is full: ${this.#queue.part(this.limits.queuedPerKey)} of its requests (QUEUED_REQUESTS_PER_KEY) already wait for ${this.#share(listRead)}. Send this one again after Retry-After, and send fewer at once; or ask the operator to raise QUEUED_REQUESTS_PER_KEY or CONCURRENT_REQUESTS_PER_KEY.`,
      { 'Retry-After': String(FULL_LINE_RETRY_AFTER_SECONDS) },
    );
  }

  /**
   * The key's requests ahead took the whole wait to move the line this far: one sent again
   * sooner than that would most likely wait as long again.
   */
  #waitedTooLong(listRead: boolean): ApiError {
    const { queueWaitMs } = this.limits;
    return new ApiError(
      'RATE_LIMITED',
      `This request waited ${queueWaitMs} ms (QUEUE_WAIT_MS) in this API key's queue for ${this.#share(listRead)} and did not get a turn: the key's requests ahead of it are too slow or too many. Nothing of it was done; send it again after Retry-After, and send fewer at once or narrow slow searches; or ask the operator to raise CONCURRENT_REQUESTS_PER_KEY or QUEUE_WAIT_MS.`,
      { 'Retry-After': String(Math.max(1, Math.ceil(queueWaitMs / 1000))) },
    );
  }
}

/** Every /api/v1 answer says how long its request waited for a slot: none until admission says. */
export const noQueueWaitYet: MiddlewareHandler<AppEnv> = async (c, next) => {
  setEnvelopeHeader(c, QUEUE_WAIT_HEADER, '0');
  await next();
};
