// A thread of the events list's SQLite readers (event-readers.ts): its own connection, one events page at a time.

import { parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from '../engine/client.js';
import type { EventsPageJob } from './event-readers.js';
import { listEvents } from './events.js';

const db = openSqlite((workerData as { databaseUrl: string }).databaseUrl);
// A reader's pages are also in the operating system's cache, so each thread keeps fewer of them
// than openSqlite's cache holds.
db.sqlite.pragma('cache_size = -16384');

async function answer({ id, organizationId, query }: EventsPageJob & { id: number }) {
  try {
    parentPort!.postMessage({ id, page: await listEvents(db, organizationId, query) });
  } catch (error) {
    const { message, code } = error as { message: string; code?: string };
    parentPort!.postMessage({ id, error: { message, code } });
  }
}

// answer() catches everything itself, so its promise never rejects.
parentPort!.on('message', (job: EventsPageJob & { id: number }) => void answer(job));

// Told once the connection is open: a thread that fails before this is not started again.
parentPort!.postMessage({ ready: true });
