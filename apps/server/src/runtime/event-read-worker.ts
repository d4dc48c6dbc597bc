// A thread of the events SQLite readers (event-readers.ts): its own connection, one job at a time.

import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../db/engine/sqlite-open.js';
import type { ReaderJob } from './event-readers.js';
import { replayEvents } from '../db/repositories/events.js';
import { listEvents } from './event-list-memory.js';

const db = openSqlite((workerData as { databaseUrl: string }).databaseUrl);
// A reader's pages are also in the operating system's cache, so each thread keeps fewer of them
// than openSqlite's cache holds.
db.sqlite.pragma('cache_size = -16384');

async function answer({ id, job }: { id: number; job: ReaderJob }) {
  try {
    const result =
      'page' in job
        ? await listEvents(db, job.page.organizationId, job.page.query)
        : await replayEvents(db, job.replay);
    parentPort!.postMessage({ id, result });
  } catch (error) {
    const { message, code } = error as { message: string; code?: string };
    parentPort!.postMessage({ id, error: { message, code } });
  }
}

// answer() catches everything itself, so its promise never rejects.
parentPort!.on('message', (message: { id: number; job: ReaderJob }) => void answer(message));

// Told once the connection is open: a thread that fails before this is not started again.
parentPort!.postMessage({ ready: true });
