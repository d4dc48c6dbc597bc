// Admission: which of one API key's requests run now, and which wait their turn. A key has a
// share of the server (requests in progress, and list reads among them); a request past it waits
// in its key's line, and is refused (429) only when the line is full or it has waited
// `queueWaitMs` (docs/architecture.md, "Admission").

import type { Context, MiddlewareHandler } from 'hono';
import { routes } from '../generated/routes.js';
import type { AppEnv } from './app-env.js';
import { ApiError, ClientAbortError } from './errors.js';
import { setEnvelopeHeader } from './request-context.js';

/** How long the request waited for a slot, in whole milliseconds, on every /api/v1 answer. */
export const QUEUE_WAIT_HEADER = 'X-Queue-Wait-Ms';

export interface AdmissionLimits {
  /** Requests of one key in progress at once; 0: no cap. */
  requestsPerKey: number;
  /** Of those, list reads; 0: no cap of their own. */
  listReadsPerKey: number;
  /** Requests of one key waiting for a slot at once; past it, 429. */
  queuedPerKey: number;
  /** How long a request may wait for a slot before it is answered 429. */
  queueWaitMs: number;
  /**
   * The server processes sharing the database (runtime/fleet-members.ts), between which each
   * share is divided: a process holds a key to its share over this, rounded up. Absent: one.
   */
  fleetSize?: () => number;
}

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

interface Waiter {
  readonly listRead: boolean;
  /** Called once the waiter has been counted as running. */
  readonly admit: () => void;
}

interface KeyLine {
  running: number;
  runningListReads: number;
  /** In arrival order. */
  readonly waiting: Waiter[];
}

type Entry =
  { admitted: true; waitedMs: number } | { admitted: false; waitedMs: number; refusal: Error };

/** The admission of one app instance: each key's running counts and its line of waiters. */
export class Admission {
  readonly #lines = new Map<string, KeyLine>();

  constructor(readonly limits: AdmissionLimits) {}

  /** Requests of every key in progress now. */
  get running(): number {
    let count = 0;
    for (const line of this.#lines.values()) count += line.running;
    return count;
  }

  /** Requests of every key waiting for a slot now. */
  get waiting(): number {
    let count = 0;
    for (const line of this.#lines.values()) count += line.waiting.length;
    return count;
  }

  /** Runs after `authorize`, which names the operation; a path of no operation passes. */
  middleware(): MiddlewareHandler<AppEnv> {
    return async (c, next) => {
      const operationId = c.get('operationId');
      if (operationId === undefined || UNQUEUED.has(operationId)) return next();
      const { keyId } = c.get('auth');
      const listRead = isListRead(operationId);
      const entry = await this.#enter(keyId, listRead, c);
      // Rounded up: 0 means the request did not wait at all.
      if (entry.waitedMs > 0) {
        setEnvelopeHeader(c, QUEUE_WAIT_HEADER, String(Math.ceil(entry.waitedMs)));
      }
      if (!entry.admitted) throw entry.refusal;
      try {
        await next();
      } finally {
        this.#leave(keyId, listRead);
      }
    };
  }

  /** This process's part of a key's share (0 stays 0: no cap). */
  #part(share: number): number {
    return share === 0 ? 0 : Math.ceil(share / (this.limits.fleetSize?.() ?? 1));
  }

  #fits(line: KeyLine, listRead: boolean): boolean {
    const requestsPerKey = this.#part(this.limits.requestsPerKey);
    const listReadsPerKey = this.#part(this.limits.listReadsPerKey);
    return (
      (requestsPerKey === 0 || line.running < requestsPerKey) &&
      (!listRead || listReadsPerKey === 0 || line.runningListReads < listReadsPerKey)
    );
  }

  #start(line: KeyLine, listRead: boolean): void {
    line.running += 1;
    if (listRead) line.runningListReads += 1;
  }

  /**
   * A slot of the key now, or a place in its line. No waiter ever fits while it waits (each
   * ending request admits every waiter that fits), so a newcomer that fits overtakes nobody.
   */
  #enter(keyId: string, listRead: boolean, c: Context<AppEnv>): Promise<Entry> | Entry {
    let line = this.#lines.get(keyId);
    if (!line) {
      line = { running: 0, runningListReads: 0, waiting: [] };
      this.#lines.set(keyId, line);
    }
    if (this.#fits(line, listRead)) {
      this.#start(line, listRead);
      return { admitted: true, waitedMs: 0 };
    }
    const { queueWaitMs } = this.limits;
    if (line.waiting.length >= this.#part(this.limits.queuedPerKey)) {
      return { admitted: false, waitedMs: 0, refusal: this.#lineFull(listRead) };
    }
    const { signal } = c.req.raw;
    if (signal.aborted) {
      return { admitted: false, waitedMs: 0, refusal: new ClientAbortError(signal.reason) };
    }
    const waiting = line.waiting;
    const since = performance.now();
    return new Promise<Entry>((resolve) => {
      const stopWaiting = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const leaveLine = (refusal: Error) => {
        stopWaiting();
        waiting.splice(waiting.indexOf(waiter), 1);
        this.#forgetIfIdle(keyId);
        resolve({ admitted: false, waitedMs: performance.now() - since, refusal });
      };
      const waiter: Waiter = {
        listRead,
        admit: () => {
          stopWaiting();
          resolve({ admitted: true, waitedMs: performance.now() - since });
        },
      };
      const onAbort = () => leaveLine(new ClientAbortError(signal.reason));
      const timer = setTimeout(() => leaveLine(this.#waitedTooLong(listRead)), queueWaitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.push(waiter);
    });
  }

  #leave(keyId: string, listRead: boolean): void {
    const line = this.#lines.get(keyId);
    if (!line) return;
    line.running -= 1;
    if (listRead) line.runningListReads -= 1;
    for (let index = 0; index < line.waiting.length && this.#fits(line, false);) {
      const waiter = line.waiting[index]!;
      if (this.#fits(line, waiter.listRead)) {
        line.waiting.splice(index, 1);
        this.#start(line, waiter.listRead);
        waiter.admit();
      } else {
        index += 1;
      }
    }
    this.#forgetIfIdle(keyId);
  }

  #forgetIfIdle(keyId: string): void {
    const line = this.#lines.get(keyId);
    if (line && line.running === 0 && line.waiting.length === 0) this.#lines.delete(keyId);
  }

  /** The share a request of this kind waits for, in words (this process's part of it). */
  #share(listRead: boolean): string {
    const { requestsPerKey, listReadsPerKey } = this.limits;
    return listRead && listReadsPerKey > 0
      ? `its ${this.#part(listReadsPerKey)} list reads at once (CONCURRENT_LIST_READS_PER_KEY)`
      : `its ${this.#part(requestsPerKey)} requests in progress at once (CONCURRENT_REQUESTS_PER_KEY)`;
  }

  #lineFull(listRead: boolean): ApiError {
    return new ApiError(
      'RATE_LIMITED',
      `The queue of this API key on this server is full: ${this.#part(this.limits.queuedPerKey)} of its requests (QUEUED_REQUESTS_PER_KEY) already wait for ${this.#share(listRead)}. Send this one again after Retry-After, and send fewer at once; or ask the operator to raise QUEUED_REQUESTS_PER_KEY or CONCURRENT_REQUESTS_PER_KEY.`,
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
