// The API keys' request budgets, one per key for every server process together (schema:
// rateLimitBudgets). A process leases tokens from a key's bucket in one statement, which brings
// the bucket up to date (refilled at the key's rate, up to one minute's worth) and takes what it
// may; the bucket never goes below zero, so the fleet never answers more than the budget.

import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { runWriteSteps, selectRows } from '../engine/portable-sql.js';
import { rateLimitBudgets } from '../schema/sqlite.js';

export interface Budget {
  /** Requests a key may make per minute, fleet-wide; also the bucket's size. */
  perMinute: number;
  /** Milliseconds since the epoch, this process's clock. */
  now: number;
}

export interface Lease {
  /** Tokens taken, 0 to the number asked for. */
  granted: number;
  /** What the bucket holds after it, fractions included. */
  left: number;
}

const { tokens, refilledAt, lastLease, apiKeyId } = rateLimitBudgets;

/** A parameter as a float on both databases (PostgreSQL would take the other operand's type). */
const float = (value: number) => sql`CAST(${value} AS double precision)`;
const smaller = (a: SQL, b: SQL) => sql`CASE WHEN ${a} < ${b} THEN ${a} ELSE ${b} END`;

/**
 * Brings the key's bucket up to date and takes up to `wanted` whole tokens from it; no row if the
 * key has none yet. A clock behind the one that last touched the bucket (another machine's)
 * refills nothing and moves no time back.
 */
function* takeTokens(keyId: string, wanted: number, { perMinute, now }: Budget) {
  const at = sql`CAST(${now} AS bigint)`;
  const refilled = smaller(
    sql`${tokens} + (CASE WHEN ${refilledAt} < ${at} THEN ${at} - ${refilledAt} ELSE 0 END) * ${float(perMinute / 60_000)}`,
    float(perMinute),
  );
  const taken = smaller(sql`floor(${refilled})`, float(wanted));
  const [row] = yield* selectRows<{ granted: number; left: number }>(sql`
    UPDATE ${rateLimitBudgets} SET
      ${sql.identifier(lastLease.name)} = ${taken},
      ${sql.identifier(tokens.name)} = ${refilled} - ${taken},
      ${sql.identifier(refilledAt.name)} = CASE WHEN ${refilledAt} < ${at} THEN ${at} ELSE ${refilledAt} END
    WHERE ${apiKeyId} = ${keyId}
    RETURNING ${lastLease} AS granted, ${tokens} AS "left"`);
  return row && { granted: Number(row.granted), left: Number(row.left) };
}

/** Takes up to `wanted` whole tokens from the key's bucket, a full one if it had none. */
export async function leaseTokens(
  db: Db,
  keyId: string,
  wanted: number,
  budget: Budget,
): Promise<Lease> {
  return runWriteSteps(db, function* () {
    const taken = yield* takeTokens(keyId, wanted, budget);
    if (taken) return taken;
    // Another process's first lease may be inserting the same row: then it is taken from.
    const granted = Math.min(wanted, budget.perMinute);
    const [inserted] = yield* selectRows<{ left: number }>(sql`
      INSERT INTO ${rateLimitBudgets} (${sql.identifier(apiKeyId.name)}, ${sql.identifier(tokens.name)}, ${sql.identifier(refilledAt.name)}, ${sql.identifier(lastLease.name)})
      VALUES (${keyId}, ${float(budget.perMinute - granted)}, ${sql`CAST(${budget.now} AS bigint)`}, ${granted})
      ON CONFLICT DO NOTHING
      RETURNING ${tokens} AS "left"`);
    if (inserted) return { granted, left: Number(inserted.left) };
    return (yield* takeTokens(keyId, wanted, budget))!;
  });
}
