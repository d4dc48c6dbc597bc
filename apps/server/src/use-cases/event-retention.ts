// Retention: each organization keeps its events for its window (its own, or the server's
// EVENT_RETENTION_DAYS), by their timestamp; older ones are removed a batch at a time, each batch
// its own transaction, so a sweep of a million events never holds the write lock (SQLite) or a
// long transaction (PostgreSQL) for more than one batch.

import type { Db } from '../db/engine/client.js';
import { organizationRetentions, removeEventsBefore } from '../db/repositories/event-retention.js';

const DAY_MS = 86_400_000;

/** How often a server sweeps (and once at start-up): an event goes within a minute of expiring. */
export const RETENTION_SWEEP_MS = 60_000;

/**
 * Events removed per transaction: on SQLite each batch holds the write lock that routing waits
 * out, so it is as small as an import's batch (cli/event-import.ts DEFAULT_EVENT_BATCH_SIZE).
 */
export const RETENTION_BATCH_SIZE = 500;

export interface RetentionSweep {
  /** The server's window in days (EVENT_RETENTION_DAYS); 0 keeps every event. */
  defaultDays: number;
  /** The time the windows end at; now by default. */
  now?: number;
  batchSize?: number;
}

/** The timestamp before which the organization's events go, or null when it keeps them all. */
export function retentionCutoff(days: number, now: number): string | null {
  return days === 0 ? null : new Date(now - days * DAY_MS).toISOString();
}

/** Removes every organization's events older than its window; returns how many it removed. */
export async function sweepExpiredEvents(
  db: Db,
  { defaultDays, now = Date.now(), batchSize = RETENTION_BATCH_SIZE }: RetentionSweep,
): Promise<number> {
  let removed = 0;
  for (const { organizationId, days } of await organizationRetentions(db)) {
    const before = retentionCutoff(days ?? defaultDays, now);
    if (before === null) continue;
    for (;;) {
      const batch = await removeEventsBefore(db, organizationId, before, batchSize);
      removed += batch.count;
      if (batch.count < batchSize) break;
      // Requests waiting on the event loop run between two batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return removed;
}
