// Two server processes opening one key's streams at once on PostgreSQL take its slots in turn:
// a take that finds the key's turn busy waits for it before its first read, so takes' serializable
// transactions do not fail and run again over and over, and the cap still holds.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { eventStreamSlots } from '../src/db/schema/sqlite.js';
import { takeStreamSlot } from '../src/db/repositories/event-stream-slots.js';
import { recordStatements } from './support/sent-statements.js';
import { freshDatabaseUrl, onPostgres, queryTestDb } from './support/test-database.js';

const PER_KEY = 40;
const TAKES_PER_PROCESS = 30;

let processes: Db[] = [];
const sent: string[][] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  const databaseUrl = await freshDatabaseUrl();
  processes = [createDb(databaseUrl), createDb(databaseUrl)];
  await migrateDb(processes[0]!);
  for (const db of processes) if (db.kind === 'postgres') sent.push(recordStatements(db.pool));
});

afterAll(async () => {
  await Promise.all(processes.map((db) => db.close()));
});

describe.runIf(onPostgres)('a key’s slots taken from two processes at once', () => {
  it('are taken in turn, each take reading once, up to the cap', async () => {
    const now = Date.now();
    const times = { perKey: PER_KEY, now, expiresAt: now + 30_000 };
    // Each process takes its slots several at a time, as streams opening together do.
    const taken = await Promise.all(
      processes.flatMap((db) =>
        Array.from({ length: TAKES_PER_PROCESS }, () => takeStreamSlot(db, 'one-key', times)),
      ),
    );
    expect(taken.filter((slot) => slot !== null)).toHaveLength(PER_KEY);
    // A count read per take, where a transaction that failed and ran again reads twice: without
    // the turns, 255-333 reads for these 60 takes. A holder that commits between a take's
    // snapshot and its try of the turn (the same statement) still makes one run again, rarely.
    const counts = sent.flat().filter((text) => text.includes('count(*)'));
    expect(counts.length).toBeGreaterThanOrEqual(2 * TAKES_PER_PROCESS);
    expect(counts.length).toBeLessThanOrEqual(2 * TAKES_PER_PROCESS + 6);
    const [row] = await queryTestDb<{ n: number | string }>(
      processes[0]!,
      sql`SELECT count(*) AS n FROM ${eventStreamSlots}`,
    );
    expect(Number(row!.n)).toBe(PER_KEY);
  });
});
