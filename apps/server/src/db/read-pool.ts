// Long SQLite reads (the events list: its page and its count) run in worker threads, each with a
// read connection of its own to the same WAL database. better-sqlite3 is synchronous: on the
// event loop, one slow page would hold up every other request of the process, /healthz included.
// Small indexed lookups (the API key, a prompt page from its cache) stay inline, where they cost
// less than a round trip to a thread.

import { Worker } from 'node:worker_threads';
import type { EventProperty } from '../domain/events.js';
import type { ListQuery } from '../domain/list-query.js';
import type { EventsPage } from './repositories/events.js';

export interface EventsPageJob {
  organizationId: number;
  query: ListQuery<EventProperty>;
}

type Reply =
  { id: number; page: EventsPage } | { id: number; error: { message: string; code?: string } };

interface Job extends EventsPageJob {
  id: number;
  resolve: (page: EventsPage) => void;
  reject: (error: Error) => void;
}

export interface SqliteReaders {
  listEvents(job: EventsPageJob): Promise<EventsPage>;
  close(): Promise<void>;
}

// The worker runs the same source as this module: TypeScript under tsx (development, tests), or
// the compiled JavaScript of a deployment.
const RUNS_TYPESCRIPT = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(`./read-worker.${RUNS_TYPESCRIPT ? 'ts' : 'js'}`, import.meta.url);

/** `count` worker threads reading `databaseUrl` (a SQLite file), each one job at a time. */
export function startSqliteReaders(databaseUrl: string, count: number): SqliteReaders {
  const idle: Worker[] = [];
  const running = new Map<Worker, Job>();
  const waiting: Job[] = [];
  let nextId = 0;
  let closing = false;

  const dispatch = () => {
    while (idle.length > 0 && waiting.length > 0) {
      const worker = idle.pop()!;
      const job = waiting.shift()!;
      running.set(worker, job);
      worker.postMessage({ id: job.id, organizationId: job.organizationId, query: job.query });
    }
  };

  const start = () => {
    const workerData = { databaseUrl };
    // A worker does not inherit tsx's loader: under tsx it registers it before the worker module.
    const worker = RUNS_TYPESCRIPT
      ? new Worker(
          `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(WORKER_URL.href)}); });`,
          { eval: true, workerData },
        )
      : new Worker(WORKER_URL, { workerData });
    worker.on('message', (reply: Reply | { ready: true }) => {
      if ('ready' in reply) {
        started = true;
        return;
      }
      const job = running.get(worker);
      running.delete(worker);
      idle.push(worker);
      if (job && 'page' in reply) job.resolve(reply.page);
      else if (job && 'error' in reply) {
        // The error keeps its driver code, so a busy or broken database still answers 503.
        job.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
      }
      dispatch();
    });
    let started = false;
    worker.on('exit', () => {
      const job = running.get(worker);
      running.delete(worker);
      const at = idle.indexOf(worker);
      if (at !== -1) idle.splice(at, 1);
      job?.reject(new Error('the events reader thread stopped; the request was not answered'));
      // A thread that could not even start would fail again: no endless restarts.
      if (!closing && started) start();
      if (idle.length + running.size === 0) {
        for (const waiter of waiting.splice(0)) {
          waiter.reject(new Error('no events reader thread is running'));
        }
      }
    });
    // An exception in the worker ends it; 'exit' above answers its job and replaces it.
    worker.on('error', () => {});
    idle.push(worker);
    dispatch();
  };

  for (let i = 0; i < count; i += 1) start();

  return {
    listEvents: (job) =>
      new Promise((resolve, reject) => {
        waiting.push({ ...job, id: (nextId += 1), resolve, reject });
        dispatch();
      }),
    close: async () => {
      closing = true;
      const workers = [...idle, ...running.keys()];
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}
