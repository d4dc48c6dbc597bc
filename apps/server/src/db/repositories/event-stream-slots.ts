// The event streams open in every server process, a row each (schema: eventStreamSlots): a key
// takes a slot in one transaction that counts its live ones, so two processes opening the key's
// last slot at once cannot both have it (SERIALIZABLE on PostgreSQL, the write lock on SQLite).
// On PostgreSQL a key's takes also take turns, so that two processes opening its streams at once
// wait for each other instead of failing their serializable transactions and running again.

import { createHash, randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import {
  execute,
  runStepsInTransaction,
  runWriteSteps,
  selectRows,
  type AdvisoryLock,
  type Steps,
} from '../engine/portable-sql.js';
import { eventStreamSlots } from '../schema/sqlite.js';

const { id, apiKeyId, expiresAt } = eventStreamSlots;

/** Milliseconds since the epoch, as a bigint parameter on both databases. */
const at = (ms: number) => sql`CAST(${ms} AS bigint)`;

/** Any constant: the advisory lock class of the keys' turns to take a slot. */
const SLOT_TURNS = 0x6167_7373; // "agss"

/**
 * The key's turn to take a slot: a lock keyed by the first 32 bits of the key id's SHA-256. Two
 * keys that share one only take turns for nothing.
 */
function slotTurn(keyId: string): AdvisoryLock {
  return { lockClass: SLOT_TURNS, key: createHash('sha256').update(keyId).digest().readInt32BE(0) };
}

/**
 * A new slot of the key's, live until `expiresAt`, if it holds fewer than `perKey` live ones
 * (those expired at `now` are removed); null if not.
 */
export async function takeStreamSlot(
  db: Db,
  keyId: string,
  terms: SlotTerms,
): Promise<string | null> {
  return runStepsInTransaction(db, () => slotTaken(keyId, terms), [slotTurn(keyId)]);
}

/** A take's cap, and its clock: now, and when the slot it takes expires unless renewed. */
interface SlotTerms {
  perKey: number;
  now: number;
  expiresAt: number;
}

function* slotTaken(
  keyId: string,
  { perKey, now, expiresAt: until }: SlotTerms,
): Steps<string | null> {
  yield* execute(sql`DELETE FROM ${eventStreamSlots}
    WHERE ${apiKeyId} = ${keyId} AND ${expiresAt} <= ${at(now)}`);
  const [held] = yield* selectRows<{ n: number }>(sql`SELECT count(*) AS n
    FROM ${eventStreamSlots} WHERE ${apiKeyId} = ${keyId}`);
  if (Number(held!.n) >= perKey) return null;
  const slot = randomUUID();
  yield* execute(sql`INSERT INTO ${eventStreamSlots}
    (${sql.identifier(id.name)}, ${sql.identifier(apiKeyId.name)}, ${sql.identifier(expiresAt.name)})
    VALUES (${slot}, ${keyId}, ${at(until)})`);
  return slot;
}

/**
 * Keeps these slots live until `until`, and removes every key's slots that expired by `now` (a
 * process that died left them).
 */
export async function renewStreamSlots(
  db: Db,
  slots: readonly string[],
  { now, until }: { now: number; until: number },
): Promise<void> {
  await runWriteSteps(db, function* () {
    if (slots.length > 0) {
      yield* execute(sql`UPDATE ${eventStreamSlots} SET ${sql.identifier(expiresAt.name)} = ${at(until)}
        WHERE ${id} IN (${sql.join(
          slots.map((slot) => sql`${slot}`),
          sql`, `,
        )})`);
    }
    yield* execute(sql`DELETE FROM ${eventStreamSlots} WHERE ${expiresAt} <= ${at(now)}`);
  });
}

export async function releaseStreamSlots(db: Db, slots: readonly string[]): Promise<void> {
  if (slots.length === 0) return;
  await runWriteSteps(db, function* () {
    yield* execute(
      sql`DELETE FROM ${eventStreamSlots} WHERE ${id} IN (${sql.join(
        slots.map((slot) => sql`${slot}`),
        sql`, `,
      )})`,
    );
  });
}
