// Stored first answers of Idempotency-Key requests. Claiming a key is one write transaction, so
// two requests with the same key (in this process or another) cannot both run. A claim holds a
// lease: if its request never finishes (its process was killed), a retry may take it over once
// the lease has run out. Rows older than the retention are expired and swept away.

import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import {
  execute,
  insertValues,
  runSteps,
  runStepsInTransaction,
  selectList,
  selectRows,
  setValues,
  type Steps,
} from '../portable-sql.js';
import { idempotencyKeys } from '../schema.js';

export interface IdempotencyTimes {
  /** How long a stored answer is replayed; older rows are expired and swept. */
  retentionMs: number;
  /** How long a claim without an answer holds its key before a retry may take it over. */
  leaseMs: number;
}

export const DEFAULT_IDEMPOTENCY_TIMES: IdempotencyTimes = {
  retentionMs: 24 * 60 * 60 * 1000,
  leaseMs: 60 * 1000,
};

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'different_request' };

const keyOf = (apiKeyId: string, key: string) =>
  sql`${idempotencyKeys.apiKeyId} = ${apiKeyId} AND ${idempotencyKeys.key} = ${key}`;

/**
 * Claims `key` for this request, or says why it cannot run (a stored answer, a running twin). A
 * claim whose lease ran out without an answer is taken over: its request died with its process.
 */
export async function claimIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  requestHash: string,
  { retentionMs, leaseMs }: IdempotencyTimes = DEFAULT_IDEMPOTENCY_TIMES,
  now = new Date(),
): Promise<IdempotencyClaim> {
  return runStepsInTransaction(db, function* (): Steps<IdempotencyClaim> {
    const [stored] = yield* selectRows<
      Omit<typeof idempotencyKeys.$inferSelect, 'apiKeyId' | 'key'>
    >(
      sql`SELECT ${selectList({
        requestHash: idempotencyKeys.requestHash,
        status: idempotencyKeys.status,
        body: idempotencyKeys.body,
        createdAt: idempotencyKeys.createdAt,
      })} FROM ${idempotencyKeys} WHERE ${keyOf(apiKeyId, key)}`,
    );
    if (stored) {
      const age = now.getTime() - Date.parse(stored.createdAt);
      const answered = stored.status !== null && stored.body !== null;
      if (age <= retentionMs) {
        if (stored.requestHash !== requestHash) return { kind: 'different_request' };
        if (answered) return { kind: 'replay', status: stored.status!, body: stored.body! };
        if (age <= leaseMs) return { kind: 'in_flight' };
      }
      yield* execute(sql`DELETE FROM ${idempotencyKeys} WHERE ${keyOf(apiKeyId, key)}`);
    }
    yield* execute(
      sql`INSERT INTO ${idempotencyKeys} ${insertValues(idempotencyKeys, [
        { apiKeyId, key, requestHash, createdAt: now.toISOString() },
      ])}`,
    );
    return { kind: 'claimed' };
  });
}

/** Stores the answer to replay for `key`. */
export async function completeIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  status: number,
  body: string,
): Promise<void> {
  await runSteps(db, () =>
    execute(
      sql`UPDATE ${idempotencyKeys} SET ${setValues(idempotencyKeys, { status, body })} WHERE ${keyOf(apiKeyId, key)}`,
    ),
  );
}

/** Frees `key` after a failure that changed nothing (a 5xx), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, apiKeyId: string, key: string): Promise<void> {
  await runSteps(db, () =>
    execute(sql`DELETE FROM ${idempotencyKeys} WHERE ${keyOf(apiKeyId, key)}`),
  );
}

/**
 * Deletes up to `limit` rows older than the retention, oldest first, and says how many went.
 * Bounded, so a sweep never holds the write lock for long; callers repeat while it fills its limit.
 */
export async function sweepExpiredIdempotencyKeys(
  db: Db,
  retentionMs: number,
  limit: number,
  now = new Date(),
): Promise<number> {
  const expiredBefore = new Date(now.getTime() - retentionMs).toISOString();
  const deleted = await runSteps(db, () =>
    selectRows<{ key: string }>(
      sql`DELETE FROM ${idempotencyKeys} WHERE (${idempotencyKeys.apiKeyId}, ${idempotencyKeys.key}) IN (
        SELECT ${idempotencyKeys.apiKeyId}, ${idempotencyKeys.key} FROM ${idempotencyKeys}
        WHERE ${idempotencyKeys.createdAt} < ${expiredBefore}
        ORDER BY ${idempotencyKeys.createdAt} LIMIT ${limit})
      RETURNING ${idempotencyKeys.key}`,
    ),
  );
  return deleted.length;
}
