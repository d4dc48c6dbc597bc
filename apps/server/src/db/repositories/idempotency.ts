// Stored first answers of Idempotency-Key requests. Claiming a key is one write transaction, so
// two requests with the same key (in this process or another) cannot both run.

import { and, eq } from 'drizzle-orm';
import { withTransaction, type Db } from '../client.js';
import { idempotencyKeys } from '../schema.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'different_request' };

const keyOf = (apiKeyId: string, key: string) =>
  and(eq(idempotencyKeys.apiKeyId, apiKeyId), eq(idempotencyKeys.key, key));

/** Claims `key` for this request, or says why it cannot run (a stored answer, a running twin). */
export async function claimIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  requestHash: string,
  now = new Date(),
): Promise<IdempotencyClaim> {
  return withTransaction(db, (tx): IdempotencyClaim => {
    const stored = tx.select().from(idempotencyKeys).where(keyOf(apiKeyId, key)).get();
    const expired =
      stored !== undefined && Date.parse(stored.createdAt) < now.getTime() - IDEMPOTENCY_WINDOW_MS;
    if (stored && !expired) {
      if (stored.requestHash !== requestHash) return { kind: 'different_request' };
      if (stored.status === null || stored.body === null) return { kind: 'in_flight' };
      return { kind: 'replay', status: stored.status, body: stored.body };
    }
    if (stored) tx.delete(idempotencyKeys).where(keyOf(apiKeyId, key)).run();
    tx.insert(idempotencyKeys)
      .values({ apiKeyId, key, requestHash, createdAt: now.toISOString() })
      .run();
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
  await withTransaction(db, (tx) =>
    tx.update(idempotencyKeys).set({ status, body }).where(keyOf(apiKeyId, key)).run(),
  );
}

/** Frees `key` after a failure that changed nothing (a 5xx), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, apiKeyId: string, key: string): Promise<void> {
  await withTransaction(db, (tx) => tx.delete(idempotencyKeys).where(keyOf(apiKeyId, key)).run());
}
