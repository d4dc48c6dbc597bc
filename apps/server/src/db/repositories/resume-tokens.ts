// The one secret the event stream's resume tokens are made with (runtime/resume-tokens.ts makes
// and reads the tokens), with the bound of the decimal tokens earlier versions sent.

import { sql } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import { execute, runSteps, selectRows } from '../engine/portable-sql.js';
import { events, resumeTokenSecret } from '../schema/sqlite.js';

/**
 * Stores `secret` (domain/server-secrets.ts), and the highest event id as the bound of decimal
 * tokens, unless there is a secret. Processes that start at the same time may all try: the first
 * insert takes id 1 and the others do nothing (the primary key), so one secret is left. (`WHERE
 * true`: without it SQLite reads ON CONFLICT as the join's ON.) The secret is read first, as
 * every process start passes here: PostgreSQL plans the insert's max over each partition of the
 * events table, which took longer than the rest of a start's statements together
 * (docs/benchmarks.md).
 */
export async function ensureResumeTokenSecret(db: Db, secret: string): Promise<void> {
  if (await readResumeTokenSecret(db)) return;
  await runSteps(db, () =>
    execute(
      sql`INSERT INTO ${resumeTokenSecret} (id, secret, decimal_through)
          SELECT 1, ${secret}, coalesce(max(${events.id}), 0)
          FROM ${events} WHERE true
          ON CONFLICT (id) DO NOTHING`,
    ),
  );
}

export interface StoredSecret {
  key: Buffer;
  decimalThrough: number;
}

export async function readResumeTokenSecret(db: Db): Promise<StoredSecret | null> {
  const [row] = await runSteps(db, () =>
    selectRows<{ secret: string; decimalThrough: number | string }>(
      sql`SELECT ${resumeTokenSecret.secret} AS "secret",
                 ${resumeTokenSecret.decimalThrough} AS "decimalThrough"
          FROM ${resumeTokenSecret} WHERE id = 1`,
    ),
  );
  // node-postgres reads a bigint as text.
  return row
    ? { key: Buffer.from(row.secret, 'base64url'), decimalThrough: Number(row.decimalThrough) }
    : null;
}
