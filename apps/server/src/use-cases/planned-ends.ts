// Planned ends (docs/decisions.md section 9) as storage learns of them: a running experiment whose
// end_at came, or that routed max_sessions sessions, is stored as stopped with the system's
// history entry, inside the transaction of whoever found it due: routing, a change, or the sweep.

import type { Db } from '../db/engine/client.js';
import { runStepsInTransaction, type Steps } from '../db/engine/portable-sql.js';
import { dueEnds, storeEnded } from '../db/repositories/experiment-planned-ends.js';
import type { EndedReason } from '../vocabulary/experiments.js';
import { readExperiment, type ExperimentRecord } from '../db/repositories/experiment-records.js';
import { RecordNotFoundError } from '../domain/errors.js';
import { stateOf, SYSTEM } from '../domain/experiment-history.js';
import { dueEnd } from '../domain/experiments.js';
import { nowIso } from '../domain/timestamps.js';
import { recordChange } from './experiment-history.js';

/**
 * The organization's experiment `id` as stored; not found without one. With `now`, as a change
 * finds it: one whose end_at has come is first stored as ended, so the change sees (and the
 * history shows) what every read already showed.
 */
export function* requireExperiment(
  organizationId: number,
  id: number,
  now?: string,
): Steps<ExperimentRecord> {
  const record = yield* readExperiment(organizationId, id);
  if (!record) {
    throw new RecordNotFoundError(`There is no experiment ${id} in this organization.`);
  }
  if (now === undefined || record.status !== 'running' || dueEnd(record, now) !== 'end_at') {
    return record;
  }
  yield* storePlannedEnd(organizationId, id, 'end_at', record.endAt!);
  return yield* requireExperiment(organizationId, id);
}

/**
 * Stores the planned end of the running experiment `id`: stopped at `stoppedAt` for `reason`,
 * with the system's history entry, inside the caller's transaction.
 */
export function* storePlannedEnd(
  organizationId: number,
  id: number,
  reason: Exclude<EndedReason, 'stopped'>,
  stoppedAt: string,
): Steps<void> {
  const current = yield* requireExperiment(organizationId, id);
  if (current.status !== 'running') return;
  const now = nowIso();
  yield* storeEnded(id, reason, stoppedAt, now);
  const after = yield* requireExperiment(organizationId, id);
  yield* recordChange(organizationId, id, now, 'ended', SYSTEM, stateOf(current), stateOf(after));
}

/** Experiments one sweep transaction ends at most, so it holds the write lock only briefly. */
const SWEEP_BATCH = 100;

/**
 * Stores the end of every running experiment (on target `targetId` alone, when given) whose
 * end_at has come, up to a sweep batch; returns how many it ended.
 */
export function* storeDueEnds(now: string, targetId?: number): Steps<number> {
  const due = yield* dueEnds(now, SWEEP_BATCH, targetId);
  for (const { id, organizationId, endAt } of due) {
    yield* storePlannedEnd(organizationId, id, 'end_at', endAt);
  }
  return due.length;
}

/**
 * Stores the end of every running experiment whose end_at has come, in transactions of a few:
 * what reads already show (asOf), made true in storage for lists and for experiments nobody
 * routes to. Returns how many it ended.
 */
export async function sweepPlannedEnds(db: Db): Promise<number> {
  let ended = 0;
  for (;;) {
    const batch = await runStepsInTransaction(db, () => storeDueEnds(nowIso()));
    ended += batch;
    if (batch < SWEEP_BATCH) return ended;
  }
}
