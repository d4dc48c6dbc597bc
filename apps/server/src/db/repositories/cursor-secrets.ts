// The secrets list cursors are sealed with (runtime/cursor-signer.ts), one row each: the newest seals,
// the newest two verify. Every process on the database reads them from here, so they share them
// without configuration; the secrets never leave the server (no answer or log line carries one).

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { execute, runSteps, runStepsInTransaction, selectRows } from '../engine/portable-sql.js';
import { cursorSecrets } from '../schema/sqlite.js';

export interface CursorSecret {
  id: number;
  /** 32 random bytes, base64url. */
  secret: string;
}

/** How many secrets verify: the one that seals and the one before it. */
export const SECRETS_KEPT = 2;

/**
 * Stores `secret` (domain/server-secrets.ts) as the first unless there is one. Processes that start
 * at the same time may all try: the first insert takes id 1 and the others do nothing (the primary
 * key), so one secret is left.
 */
export async function ensureCursorSecret(db: Db, secret: string): Promise<void> {
  await runSteps(db, () =>
    execute(
      sql`INSERT INTO ${cursorSecrets} (id, secret)
          SELECT 1, ${secret} WHERE NOT EXISTS (SELECT 1 FROM ${cursorSecrets})
          ON CONFLICT (id) DO NOTHING`,
    ),
  );
}

/** The secrets that verify, newest (the one that seals) first. */
export async function readCursorSecrets(db: Db): Promise<CursorSecret[]> {
  return runSteps(db, () =>
    selectRows<CursorSecret>(
      sql`SELECT ${cursorSecrets.id} AS "id", ${cursorSecrets.secret} AS "secret"
          FROM ${cursorSecrets} ORDER BY ${cursorSecrets.id} DESC LIMIT ${SECRETS_KEPT}`,
    ),
  );
}

export interface Rotation {
  /** The new secret, which seals from now on. */
  sealing: number;
  /** The secret that sealed until now, which still verifies; null if there was none. */
  verifying: number | null;
  /** Secrets deleted: cursors sealed with them are refused. */
  retired: number[];
}

/** Adds `secret` after the newest, which seals from now on, and deletes all but the newest two. */
export async function rotateCursorSecret(db: Db, secret: string): Promise<Rotation> {
  return runStepsInTransaction(db, function* () {
    const [added] = yield* selectRows<{ id: number }>(
      sql`INSERT INTO ${cursorSecrets} (id, secret)
          SELECT coalesce(max(${cursorSecrets.id}), 0) + 1, ${secret} FROM ${cursorSecrets}
          RETURNING id AS "id"`,
    );
    const sealing = added!.id;
    const retired = yield* selectRows<{ id: number }>(
      sql`DELETE FROM ${cursorSecrets} WHERE ${cursorSecrets.id} <= ${sealing - SECRETS_KEPT}
          RETURNING id AS "id"`,
    );
    const [verifying] = yield* selectRows<{ id: number }>(
      sql`SELECT ${cursorSecrets.id} AS "id" FROM ${cursorSecrets}
          WHERE ${cursorSecrets.id} < ${sealing} ORDER BY ${cursorSecrets.id} DESC LIMIT 1`,
    );
    return {
      sealing,
      verifying: verifying?.id ?? null,
      retired: retired.map((row) => row.id).sort((a, b) => a - b),
    };
  });
}
