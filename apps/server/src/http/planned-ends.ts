// The sweep that stores planned ends nobody routed past: an experiment whose end_at came reads as
// stopped at once (domain/experiments.ts `asOf`), and routing stores that with the next session;
// without traffic this stores it, so lists and the database agree within a minute.

import type { Logger } from 'pino';
import type { Db } from '../db/engine/client.js';
import { sweepPlannedEnds } from '../use-cases/planned-ends.js';
import { startPeriodicJob } from '../runtime/periodic-job.js';

/** How often the sweep runs: twice a minute, so a planned end is stored within one. */
export const PLANNED_END_SWEEP_MS = 30_000;

/** Sweeps now and then every `intervalMs`; returns a function that stops it. */
export function startPlannedEndSweeper(
  db: Db,
  logger: Logger,
  intervalMs = PLANNED_END_SWEEP_MS,
): () => void {
  return startPeriodicJob(logger, {
    name: 'planned end sweep',
    intervalMs,
    run: async () => {
      const ended = await sweepPlannedEnds(db);
      if (ended > 0) logger.info({ ended }, 'planned experiment ends stored');
    },
  });
}
