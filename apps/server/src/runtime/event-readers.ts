// Long SQLite reads (the events list: its page and its count; a stream's replay) run in worker
// threads, handed to the app by the runtime (start.ts) and started by the first such read, each
// with a read connection of its own to the same WAL database. better-sqlite3 is synchronous: on the
// event loop, one slow page would hold up every other request of the process, /healthz included.
// Small indexed lookups (the API key, a prompt page from its cache) stay inline, where they cost
// less than a round trip to a thread.

import type { Worker } from 'node:worker_threads';
import type { Db } from '../db/engine/client.js';
import type { EventProperty } from '../vocabulary/events.js';
import type { ListQuery } from '../vocabulary/list-query.js';
import { QueryTimeoutError } from '../db/engine/errors.js';
import { startModuleThread } from './module-thread.js';
import {
  replayEvents as replayEventsInline,
  type EventsPage,
  type FeedEvent,
  type ReplayJob,
} from '../db/repositories/events.js';

/** What reads events pages and replays off the event loop: SQLite's reader threads. */
export interface EventReaders {
  listEvents(job: { organizationId: number; query: ListQuery<EventProperty> }): Promise<EventsPage>;
  replayEvents(job: ReplayJob): Promise<FeedEvent[]>;
  close(): Promise<void>;
}

/** A batch of a stream's replay; with `readers`, read on one of them. */
export function replayEvents(db: Db, job: ReplayJob, readers?: EventReaders): Promise<FeedEvent[]> {
  return readers ? readers.replayEvents(job) : replayEventsInline(db, job);
}

export interface EventsPageJob {
  organizationId: number;
  query: ListQuery<EventProperty>;
}

/** What a thread is asked: an events page, or a batch of a stream's replay. */
export type ReaderJob = { page: EventsPageJob } | { replay: ReplayJob };

type Reply =
  | { id: number; result: EventsPage | FeedEvent[] }
  | { id: number; error: { message: string; code?: string } };

interface Job {
  id: number;
  job: ReaderJob;
  resolve: (result: EventsPage | FeedEvent[]) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
}

export interface SqliteReaderOptions {
  /**
   * How long a thread may work on one job (0: no limit). Past it the job fails with
   * QueryTimeoutError and the thread is given up and replaced; see startEventReaders.
   */
  timeoutMs?: number;
}

/**
 * `count` worker threads reading `databaseUrl` (a SQLite file), each one job at a time, given to
 * a thread once it has opened its connection. The threads start with the first job: each is a
 * Node.js environment of its own, dear to start, and a server that never reads an events page
 * or replays a stream (one that only routes sessions, say) needs none.
 *
 * A job past `timeoutMs` is answered with QueryTimeoutError at once, and its thread terminated.
 * better-sqlite3 cannot interrupt a statement, so the thread ends only when the statement it is
 * in returns (the job's later statements never run); a new thread takes its place right away,
 * unless as many given-up threads are still ending as the pool has threads: then the new one
 * starts when one of those ends, so slow reads cannot pile up threads.
 */
export function startEventReaders(
  databaseUrl: string,
  count: number,
  { timeoutMs = 0 }: SqliteReaderOptions = {},
): EventReaders {
  /** Threads still opening their connection, each with a promise of its first message or end. */
  const starting = new Map<Worker, Promise<unknown>>();
  const idle: Worker[] = [];
  const running = new Map<Worker, Job>();
  /** Threads given up on after a timeout, and whether their replacement has started. */
  const stopping = new Map<Worker, { replaced: boolean }>();
  const waiting: Job[] = [];
  let nextId = 0;
  let begun = false;
  let closing = false;

  /** Threads that are, or will be, there to take jobs. */
  const capacity = () =>
    starting.size +
    idle.length +
    running.size +
    [...stopping.values()].filter((s) => !s.replaced).length;

  const failWaiting = (message: string) => {
    for (const waiter of waiting.splice(0)) waiter.reject(new Error(message));
  };

  const giveUp = (worker: Worker, job: Job) => {
    if (running.get(worker) !== job) return;
    running.delete(worker);
    job.reject(new QueryTimeoutError(timeoutMs));
    const replaced = stopping.size < count;
    stopping.set(worker, { replaced });
    void worker.terminate();
    if (replaced) start();
  };

  const dispatch = () => {
    while (idle.length > 0 && waiting.length > 0) {
      const worker = idle.pop()!;
      const job = waiting.shift()!;
      running.set(worker, job);
      if (timeoutMs > 0) job.timer = setTimeout(() => giveUp(worker, job), timeoutMs);
      worker.postMessage({ id: job.id, job: job.job });
    }
  };

  const start = () => {
    const worker = startModuleThread('./event-read-worker', import.meta.url, { databaseUrl });
    starting.set(
      worker,
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.once('exit', resolve);
      }),
    );
    let started = false;
    worker.on('message', (reply: Reply | { ready: true }) => {
      if ('ready' in reply) {
        started = true;
        starting.delete(worker);
        if (closing) return;
        idle.push(worker);
        dispatch();
        return;
      }
      // A given-up thread's late answer: its job was answered with the timeout.
      if (stopping.has(worker)) return;
      const job = running.get(worker);
      running.delete(worker);
      idle.push(worker);
      if (job) clearTimeout(job.timer);
      if (job && 'result' in reply) job.resolve(reply.result);
      else if (job && 'error' in reply) {
        // The error keeps its driver code, so a busy or broken database still answers 503.
        job.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      }
      dispatch();
    });
    worker.on('exit', () => {
      starting.delete(worker);
      const given = stopping.get(worker);
      stopping.delete(worker);
      const job = running.get(worker);
      running.delete(worker);
      const at = idle.indexOf(worker);
      if (at !== -1) idle.splice(at, 1);
      if (job) clearTimeout(job.timer);
      job?.reject(new Error('the events reader thread stopped; the request was not answered'));
      // A thread that could not even start would fail again: no endless restarts.
      if (!closing && started && !given?.replaced) start();
      if (capacity() === 0) failWaiting('no events reader thread is running');
    });
    // An exception in the worker ends it; 'exit' above answers its job and replaces it.
    worker.on('error', () => {});
  };

  const run = (job: ReaderJob) =>
    new Promise<EventsPage | FeedEvent[]>((resolve, reject) => {
      if (!begun && !closing) {
        begun = true;
        for (let i = 0; i < count; i += 1) start();
      }
      if (capacity() === 0) {
        reject(new Error('no events reader thread is running'));
        return;
      }
      waiting.push({ job, id: (nextId += 1), resolve, reject });
      dispatch();
    });

  return {
    listEvents: async (page) => (await run({ page })) as EventsPage,
    replayEvents: async (replay) => (await run({ replay })) as FeedEvent[],
    close: async () => {
      closing = true;
      failWaiting('the events reader threads were closed');
      // Never mid-load (startModuleThread).
      const starters = [...starting].map(async ([worker, loadedOrEnded]) => {
        await loadedOrEnded;
        await worker.terminate();
      });
      const workers = [...idle, ...running.keys(), ...stopping.keys()];
      await Promise.all([...starters, ...workers.map((worker) => worker.terminate())]);
    },
  };
}

/**
 * The events list's reader threads for a server on `databaseUrl`, or none: on PostgreSQL (its
 * pool reads concurrently), for `:memory:` (that database exists in one connection only, nothing
 * another thread could read) and with 0 threads (every list reads inline).
 */
export function eventReadersFor(
  db: Db,
  databaseUrl: string,
  threads: number,
): EventReaders | undefined {
  if (db.kind !== 'sqlite' || threads === 0 || databaseUrl === ':memory:') return undefined;
  return startEventReaders(databaseUrl, threads, { timeoutMs: db.listQueryTimeoutMs });
}
