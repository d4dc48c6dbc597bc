// What the planned ends read and write: the running experiments whose end_at has come, and the
// row of one that ended. When an end is due and what it records is the use-case's
// (use-cases/experiment-changes.ts).

import { sql } from 'drizzle-orm';
import { execute, selectList, selectRows, setValues, type Steps } from '../engine/portable-sql.js';
import { experiments } from '../schema/sqlite.js';
import type { EndedReason } from '../../vocabulary/experiments.js';

/**
 * Up to `limit` running experiments whose end_at is at or before `now`, by id; on the target
 * `targetId` alone when one is given.
 */
export function dueEnds(
  now: string,
  limit: number,
  targetId?: number,
): Steps<Array<{ id: number; organizationId: number; endAt: string }>> {
  const onTarget = targetId === undefined ? sql`TRUE` : sql`${experiments.targetId} = ${targetId}`;
  return selectRows<{ id: number; organizationId: number; endAt: string }>(
    sql`SELECT ${selectList({
      id: experiments.id,
      organizationId: experiments.organizationId,
      endAt: experiments.endAt,
    })} FROM ${experiments}
      WHERE ${experiments.status} = 'running' AND ${experiments.endAt} <= ${now} AND ${onTarget}
      ORDER BY ${experiments.id} LIMIT ${limit}`,
  );
}

/**
 * Stores experiment `id` as stopped at `stoppedAt` for `reason`. `last_updated_by` keeps the last
 * person's name: the system is no one.
 */
export function storeEnded(
  id: number,
  reason: Exclude<EndedReason, 'stopped'>,
  stoppedAt: string,
  updatedAt: string,
): Steps<void> {
  return execute(
    sql`UPDATE ${experiments} SET ${setValues(experiments, {
      status: 'stopped',
      stoppedAt,
      endedReason: reason,
      updatedAt,
    })} WHERE ${experiments.id} = ${id}`,
  );
}
