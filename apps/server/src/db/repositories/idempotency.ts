// Stored first answers of Idempotency-Key requests. Claiming a key is one write transaction, so
// two requests with the same key (in this process or another) cannot both run.

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

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'different_request' };

const keyOf = (apiKeyId: string, key: string) =>
  sql`${idempotencyKeys.apiKeyId} = ${apiKeyId} AND ${idempotencyKeys.key} = ${key}`;

/** Claims `key` for this request, or says why it cannot run (a stored answer, a running twin). */
export async function claimIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  requestHash: string,
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
    const expired =
      stored !== undefined && Date.parse(stored.createdAt) < now.getTime() - IDEMPOTENCY_WINDOW_MS;
    if (stored && !expired) {
      if (stored.requestHash !== requestHash) return { kind: 'different_request' };
      if (stored.status === null || stored.body === null) return { kind: 'in_flight' };
      return { kind: 'replay', status: stored.status, body: stored.body };
    }
    if (stored) yield* execute(sql`DELETE FROM ${idempotencyKeys} WHERE ${keyOf(apiKeyId, key)}`);
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
