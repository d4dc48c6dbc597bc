// The event streams open in every server process, a row each (schema: eventStreamSlots): a key
// takes a slot in one transaction that counts its live ones, so two processes opening the key's
// last slot at once cannot both have it (SERIALIZABLE on PostgreSQL, the write lock on SQLite).

import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import {
  execute,
  runStepsInTransaction,
  runWriteSteps,
  selectRows,
} from '../engine/portable-sql.js';
import { eventStreamSlots } from '../schema/sqlite.js';

const { id, apiKeyId, expiresAt } = eventStreamSlots;

/** Milliseconds since the epoch, as a bigint parameter on both databases. */
const at = (ms: number) => sql`CAST(${ms} AS bigint)`;

/**
 * A new slot of the key's, live until `expiresAt`, if it holds fewer than `perKey` live ones
 * (those expired at `now` are removed); null if not.
 */
export async function takeStreamSlot(
  db: Db,
  keyId: string,
  { perKey, now, expiresAt: until }: { perKey: number; now: number; expiresAt: number },
): Promise<string | null> {
  return runStepsInTransaction(db, function* () {
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
  });
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
