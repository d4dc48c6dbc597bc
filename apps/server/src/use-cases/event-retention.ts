// Retention: each organization keeps its events for its window (its own, or the server's
// EVENT_RETENTION_DAYS), by their timestamp; older ones are removed a batch at a time, each batch
// its own transaction, so a sweep of a million events never holds the write lock (SQLite) or a
// long transaction (PostgreSQL) for more than one batch.

import type { Db } from '../db/engine/client.js';
import { dropExpiredEventPartitions } from '../db/repositories/event-partitions.js';
import { organizationRetentions, removeEventsBefore } from '../db/repositories/event-retention.js';

const DAY_MS = 86_400_000;

/** How often a server sweeps (and once at start-up): an event goes within a minute of expiring. */
export const RETENTION_SWEEP_MS = 60_000;

/**
 * Events removed per transaction. On SQLite a batch holds the write lock, and in the server's
 * process the event loop too, for as long as it runs: small enough for a routed session to wait
 * it out, where larger batches back to back raised routing's p99 many times over
 * (docs/benchmarks.md, "Figures behind the code").
 */
export const RETENTION_BATCH_SIZE = 100;

/**
 * The pause after a batch, in multiples of the batch's time. On SQLite a batch's commit now and
 * then waits for the disk, holding the event loop. Longer pauses cost routing's p99 less beside a
 * sweep; this one still removes events twice as fast as a platform logging 1,000 a second all day
 * writes them (docs/benchmarks.md, "Figures behind the code").
 */
const PAUSE_PER_BATCH_TIME = 7;

export interface RetentionSweep {
  /** The server's window in days (EVENT_RETENTION_DAYS); 0 keeps every event. */
  defaultDays: number;
  /** The time the windows end at; now by default. */
  now?: number;
  batchSize?: number;
}

/** The timestamp before which the organization's events go, or null when it keeps them all. */
function retentionCutoff(days: number, now: number): string | null {
  return days === 0 ? null : new Date(now - days * DAY_MS).toISOString();
}

/**
 * Removes every organization's events older than its window; returns how many it removed. On
 * PostgreSQL the months whose every event has expired go first, whole (event-partitions.ts); the
 * rest go a batch at a time.
 */
export async function sweepExpiredEvents(
  db: Db,
  { defaultDays, now = Date.now(), batchSize = RETENTION_BATCH_SIZE }: RetentionSweep,
): Promise<number> {
  const cutoffs = new Map(
    (await organizationRetentions(db)).map(({ organizationId, days }) => [
      organizationId,
      retentionCutoff(days ?? defaultDays, now),
    ]),
  );
  let removed = db.kind === 'postgres' ? await dropExpiredEventPartitions(db, cutoffs) : 0;
  for (const [organizationId, before] of cutoffs) {
    if (before === null) continue;
    for (;;) {
      const batchStart = performance.now();
      const removedNow = await removeEventsBefore(db, organizationId, before, batchSize);
      removed += removedNow;
      if (removedNow < batchSize) break;
      // A pause of PAUSE_PER_BATCH_TIME times what the batch took: the sweep takes at most an
      // eighth of the write lock's time (and of the event loop's, on SQLite), so routing beside
      // it keeps its pace.
      await new Promise((resolve) =>
        setTimeout(resolve, PAUSE_PER_BATCH_TIME * (performance.now() - batchStart)),
      );
    }
  }
  return removed;
}
