// Every job a server process runs at start-up and then at an interval, in one list: the sweeps
// of expired idempotency keys, planned experiment ends and events past retention, and on
// PostgreSQL the event partitions of the months ahead. One run of a job at a time.

import type { Logger } from 'pino';
import type { Db } from '../db/engine/client.js';
import { ensureEventPartitions } from '../db/repositories/event-partitions.js';
import {
  sweepExpiredIdempotencyKeys,
  type IdempotencyTimes,
} from '../db/repositories/idempotency.js';
import { RETENTION_SWEEP_MS, sweepExpiredEvents } from '../use-cases/event-retention.js';
import { sweepPlannedEnds } from '../use-cases/experiment-changes.js';

export interface PeriodicJob {
  name: string;
  intervalMs: number;
  run: () => Promise<void>;
}

/** How often the planned end sweep runs: twice a minute, so a planned end is stored within one. */
const PLANNED_END_SWEEP_MS = 30_000;
/** How often a PostgreSQL server checks that the months ahead have their partitions. */
const PARTITIONS_AHEAD_MS = 3_600_000;
/** Rows one idempotency sweep statement deletes at most, so it holds the write lock briefly. */
const SWEEP_BATCH = 1000;

/**
 * Runs `run` now and every `intervalMs`; a tick that finds the previous run still going skips.
 * A failed run is logged and the next tick tries again. The timer does not keep the process
 * alive. Returns a function that stops it.
 */
export function startPeriodicJob(
  logger: Logger,
  { name, intervalMs, run }: PeriodicJob,
): () => void {
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= run()
      .catch((error: unknown) => logger.warn({ err: error }, `${name} failed`))
      .finally(() => (running = null));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Deletes expired idempotency keys, in batches, until none is left. */
function idempotencySweep(
  db: Db,
  logger: Logger,
  { retentionMs, intervalMs }: { retentionMs: number; intervalMs: number },
): PeriodicJob {
  return {
    name: 'idempotency key sweep',
    intervalMs,
    run: async () => {
      let swept = 0;
      for (;;) {
        const deleted = await sweepExpiredIdempotencyKeys(db, retentionMs, SWEEP_BATCH);
        swept += deleted;
        if (deleted < SWEEP_BATCH) break;
        // Let requests waiting on the event loop run between batches.
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (swept > 0) logger.debug({ swept }, 'expired idempotency keys swept');
    },
  };
}

/** Sweeps expired idempotency keys now and then every `intervalMs`; returns its stop. */
export function startIdempotencySweeper(
  db: Db,
  logger: Logger,
  times: { retentionMs: number; intervalMs: number },
): () => void {
  return startPeriodicJob(logger, idempotencySweep(db, logger, times));
}

export interface PeriodicJobSettings {
  idempotencyTimes: IdempotencyTimes;
  /** EVENT_RETENTION_DAYS: the window of an organization without its own. */
  eventRetentionDays: number;
}

/** The process's periodic jobs. */
export function periodicJobs(db: Db, logger: Logger, settings: PeriodicJobSettings): PeriodicJob[] {
  const { retentionMs } = settings.idempotencyTimes;
  return [
    // Often enough that the table holds little beyond the retention, at most once a minute.
    idempotencySweep(db, logger, { retentionMs, intervalMs: Math.min(60_000, retentionMs / 4) }),
    {
      // An experiment whose end_at came reads as stopped at once (domain/experiments.ts `asOf`)
      // and routing stores that with the next session; without traffic this stores it, so lists
      // and the database agree within a minute.
      name: 'planned end sweep',
      intervalMs: PLANNED_END_SWEEP_MS,
      run: async () => {
        const ended = await sweepPlannedEnds(db);
        if (ended > 0) logger.info({ ended }, 'planned experiment ends stored');
      },
    },
    {
      name: 'event retention sweep',
      intervalMs: RETENTION_SWEEP_MS,
      run: async () => {
        const removed = await sweepExpiredEvents(db, { defaultDays: settings.eventRetentionDays });
        if (removed > 0) logger.info({ removed }, 'events past their retention window removed');
      },
    },
    // The months ahead are made at migration; this makes them as months pass.
    ...(db.kind === 'postgres'
      ? [
          {
            name: 'event partitions ahead',
            intervalMs: PARTITIONS_AHEAD_MS,
            run: async () => {
              const made = await ensureEventPartitions(db);
              if (made.length > 0) logger.info({ made }, 'event partitions made');
            },
          },
        ]
      : []),
  ];
}
