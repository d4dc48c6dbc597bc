// Stored first answers of Idempotency-Key requests. Claiming a key is one write transaction, so
// two requests with the same key (in this process or another) cannot both run. A claim holds a
// lease: if its request never finishes (its process was killed), a retry may take it over once
// the lease has run out. Rows older than the retention are expired and swept away.

import { sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import {
  execute,
  insertValues,
  prepared,
  runSteps,
  runStepsInTransaction,
  runWriteSteps,
  selectList,
  selectRows,
  type Steps,
} from '../engine/portable-sql.js';
import { idempotencyKeys } from '../schema/sqlite.js';

export interface IdempotencyTimes {
  /** How long a stored answer is replayed; older rows are expired and swept. */
  retentionMs: number;
  /** How long a claim without an answer holds its key before a retry may take it over. */
  leaseMs: number;
}

export type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string }
  | { kind: 'in_flight' }
  | { kind: 'different_request' };

const keyOf = (apiKeyId: string | Placeholder, key: string | Placeholder) =>
  sql`${idempotencyKeys.apiKeyId} = ${apiKeyId} AND ${idempotencyKeys.key} = ${key}`;

type StoredKey = Omit<typeof idempotencyKeys.$inferSelect, 'apiKeyId' | 'key'>;

const STORED_KEY_COLUMNS = selectList({
  requestHash: idempotencyKeys.requestHash,
  status: idempotencyKeys.status,
  body: idempotencyKeys.body,
  createdAt: idempotencyKeys.createdAt,
});

// Every keyed POST looks its key up.
const storedKey = prepared<StoredKey>(
  sql`SELECT ${STORED_KEY_COLUMNS} FROM ${idempotencyKeys}
      WHERE ${keyOf(sql.placeholder('apiKeyId'), sql.placeholder('key'))}`,
);

/** What a stored row means for a request with `requestHash` now; null when it holds no more. */
function standing(
  stored: StoredKey | undefined,
  requestHash: string,
  { retentionMs, leaseMs }: IdempotencyTimes,
  now: Date,
): Exclude<IdempotencyClaim, { kind: 'claimed' }> | null {
  if (!stored) return null;
  const age = now.getTime() - Date.parse(stored.createdAt);
  if (age > retentionMs) return null;
  if (stored.requestHash !== requestHash) return { kind: 'different_request' };
  if (stored.status !== null && stored.body !== null) {
    return { kind: 'replay', status: stored.status, body: stored.body };
  }
  // A claim without an answer past its lease: its request died with its process.
  return age <= leaseMs ? { kind: 'in_flight' } : null;
}

/**
 * Claims `key` for this request, or says why it cannot run (a stored answer, a running twin). A
 * claim whose lease ran out without an answer is taken over: its request died with its process.
 */
export async function claimIdempotencyKey(
  db: Db,
  apiKeyId: string,
  key: string,
  requestHash: string,
  times: IdempotencyTimes,
  now = new Date(),
): Promise<IdempotencyClaim> {
  return runStepsInTransaction(db, function* (): Steps<IdempotencyClaim> {
    const [stored] = yield* storedKey({ apiKeyId, key });
    const held = standing(stored, requestHash, times, now);
    if (held) return held;
    if (stored) yield* execute(sql`DELETE FROM ${idempotencyKeys} WHERE ${keyOf(apiKeyId, key)}`);
    yield* execute(
      sql`INSERT INTO ${idempotencyKeys} ${insertValues(idempotencyKeys, [
        { apiKeyId, key, requestHash, createdAt: now.toISOString() },
      ])}`,
    );
    return { kind: 'claimed' };
  });
}

/** Why a request with `key` cannot run (as claimIdempotencyKey), or null: it may. Writes nothing. */
export async function idempotencyKeyStanding(
  db: Db,
  apiKeyId: string,
  key: string,
  requestHash: string,
  times: IdempotencyTimes,
): Promise<Exclude<IdempotencyClaim, { kind: 'claimed' }> | null> {
  const [stored] = await runSteps(db, () => storedKey({ apiKeyId, key }));
  return standing(stored, requestHash, times, new Date());
}

/** Frees `key` after a failure that changed nothing (a 5xx), so a retry runs again. */
export async function releaseIdempotencyKey(db: Db, apiKeyId: string, key: string): Promise<void> {
  await runWriteSteps(db, () =>
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
  const deleted = await runWriteSteps(db, () =>
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

/**
 * A POST whose answer is stored in the same transaction as its work (session routing): no claim
 * is written first, so a keyed request costs what an unkeyed one does, and a crash leaves either
 * the work with its answer or neither. A twin that commits first wins; the other's transaction
 * finds the key taken, rolls back and replays the winner's answer.
 */
export interface IdempotentWrite {
  apiKeyId: string;
  key: string;
  requestHash: string;
  times: IdempotencyTimes;
  /** Set once the answer was stored with the work. */
  stored: boolean;
  /** Set when the key was claimed before the work (claimIdempotencyKeyFirst). */
  claimed?: boolean;
}

/** Thrown inside a write whose key another request took first: roll back, then replay. */
export class IdempotencyKeyTakenError extends Error {
  override name = 'IdempotencyKeyTakenError';
  constructor() {
    super('another request with this Idempotency-Key was answered first');
  }
}

type AnswerValue = 'apiKeyId' | 'key' | 'requestHash' | 'status' | 'body' | 'createdAt';

/**
 * Stores an answer unless a live row holds its key (an answer within the retention, or another
 * request's claim within its lease; with `claimed`, the request's own claim is completed): one
 * upsert, whose RETURNING says whether it stored. Values are given, or placeholders to prepare.
 */
function storeAnswerSql(
  values: Record<AnswerValue | 'expiredBefore' | 'leaseBefore', unknown>,
  claimed: boolean,
): SQL {
  const { expiredBefore, leaseBefore, ...row } = values;
  const ownClaim = claimed
    ? sql`${idempotencyKeys.requestHash} = excluded.request_hash`
    : sql`${idempotencyKeys.createdAt} < ${leaseBefore}`;
  return sql`INSERT INTO ${idempotencyKeys} ${insertValues(idempotencyKeys, [row as typeof idempotencyKeys.$inferInsert])}
    ${unlessHeld(expiredBefore, ownClaim)}`;
}

/** The upsert's tail: replace only a row that no longer holds its key. */
function unlessHeld(expiredBefore: unknown, ownClaim: SQL): SQL {
  return sql`ON CONFLICT (api_key_id, key) DO UPDATE SET request_hash = excluded.request_hash,
      status = excluded.status, body = excluded.body, created_at = excluded.created_at
    WHERE ${idempotencyKeys.createdAt} < ${expiredBefore}
      OR (${idempotencyKeys.status} IS NULL AND ${ownClaim})
    RETURNING ${idempotencyKeys.apiKeyId} AS "apiKeyId", ${idempotencyKeys.key} AS "key"`;
}

/** Rows created before `expiredBefore` hold their key no more; claims before `leaseBefore` neither. */
export function heldSince({ retentionMs, leaseMs }: IdempotencyTimes, now: Date) {
  return {
    expiredBefore: new Date(now.getTime() - retentionMs).toISOString(),
    leaseBefore: new Date(now.getTime() - leaseMs).toISOString(),
  };
}

function answerValues(write: IdempotentWrite, status: number, body: string, now: Date) {
  return {
    apiKeyId: write.apiKeyId,
    key: write.key,
    requestHash: write.requestHash,
    status,
    body,
    createdAt: now.toISOString(),
    ...heldSince(write.times, now),
  };
}

const PREPARED_STORE = storeAnswerSql(
  Object.fromEntries(
    [
      'apiKeyId',
      'key',
      'requestHash',
      'status',
      'body',
      'createdAt',
      'expiredBefore',
      'leaseBefore',
    ].map((name) => [name, sql.placeholder(name)]),
  ) as Record<AnswerValue | 'expiredBefore' | 'leaseBefore', Placeholder>,
  false,
);
const storeAnswer = prepared<{ key: string }>(PREPARED_STORE);

/**
 * Stores the answer of `write` inside the open write transaction that does its work; false when
 * another request holds the key.
 */
export function* storeAnswerWithWrite(write: IdempotentWrite, body: string): Steps<boolean> {
  const stored = yield* storeAnswer(answerValues(write, 200, body, new Date()));
  return stored.length > 0;
}

/**
 * The tail of an INSERT of answers given with their work (the PostgreSQL routing batch's, in the
 * statement that stores its sessions): as storeAnswerWithWrite's, it stores an answer only where
 * no live row holds its key, and returns the keys it stored as "apiKeyId" and "key".
 */
export function unlessKeyHeld(expiredBefore: unknown, leaseBefore: unknown): SQL {
  return unlessHeld(expiredBefore, sql`${idempotencyKeys.createdAt} < ${leaseBefore}`);
}

/**
 * Stores an answer given outside the write (an error) in a transaction of its own. Returns null
 * when it stored it; otherwise what the row that holds the key means for this request: another
 * answer to replay (a twin's), a running twin, or a different request that used the key first.
 */
export async function storeIdempotentAnswer(
  db: Db,
  write: IdempotentWrite,
  status: number,
  body: string,
  now = new Date(),
): Promise<Exclude<IdempotencyClaim, { kind: 'claimed' }> | null> {
  return runStepsInTransaction(db, function* () {
    const stored = yield* selectRows<{ key: string }>(
      storeAnswerSql(answerValues(write, status, body, now), write.claimed === true),
    );
    if (stored.length > 0) return null;
    const [existing] = yield* storedKey({ apiKeyId: write.apiKeyId, key: write.key });
    return standing(existing, write.requestHash, write.times, now);
  });
}
