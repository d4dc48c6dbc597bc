// `agentline events import` killed with SIGKILL in the middle of a file, then run again: every
// event of the file is stored exactly once, and the description index still matches the events.
// Runs on both backends (on PostgreSQL the kill drops the connection mid-transaction).

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { execute, runListRead, selectRows } from '../src/db/engine/portable-sql.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import { checkDescriptionIndex, onSqlite, queryTestDb } from './support/test-database.js';
import { entryArgs } from './support/server-process.js';

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
const LINES = 60_000;
const BATCH = 1_000;

let workspace: TempWorkspace;
let file: string;

beforeAll(async () => {
  workspace = await createWorkspace();
  expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
  file = join(workspace.dir, 'events.ndjson');
  const out = createWriteStream(file);
  for (let i = 0; i < LINES; i += 1) {
    // Half bring an id, half are identified by their content, so both kinds of key must resume.
    const event = {
      ...(i % 2 === 0 ? { id: `e-${i}` } : {}),
      timestamp: new Date(Date.UTC(2026, 4, 1) + i * 1000).toISOString(),
      session_id: `s-${Math.floor(i / 10)}`,
      category: 'tool',
      type: 'tool-call',
      description: i % 20 === 0 ? null : `Looked up order ${i}`,
    };
    out.write(`${JSON.stringify(event)}\n`);
  }
  await new Promise((resolve) => out.end(resolve));
});

afterAll(() => workspace.remove());

function startImport() {
  return spawn(
    process.execPath,
    [
      ...entryArgs('cli/main'),
      'events',
      'import',
      file,
      '--org',
      'Acme',
      '--batch-size',
      String(BATCH),
    ],
    { cwd: SERVER_DIR, env: { PATH: process.env.PATH, DATABASE_URL: workspace.databaseUrl } },
  );
}

async function withDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(workspace.databaseUrl);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

async function stored(): Promise<{ events: number; keys: number }> {
  const [row] = await withDb((db) =>
    queryTestDb<{ events: number; keys: number }>(
      db,
      sql`SELECT count(*) AS events, count(DISTINCT import_key) AS keys FROM events`,
    ),
  );
  return row!;
}

/**
 * PostgreSQL finishes a batch's statement that reached it before the kill, and commits it: what
 * is stored is read once no other connection to the test database is still running one.
 */
async function untilImportStatementsEnd(): Promise<void> {
  if (onSqlite) return;
  for (;;) {
    const [running] = await withDb((db) =>
      queryTestDb<{ n: number }>(
        db,
        sql`SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
      ),
    );
    if (running!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * SQLite: the FTS5 table, which the import fills itself, holds exactly the stored descriptions
 * (rank 1 compares it with the events table). PostgreSQL keeps its trigram index itself, through
 * any crash; a search through it finds every stored description.
 */
async function expectDescriptionIndexMatches(): Promise<void> {
  await withDb(async (db) => {
    if (db.kind === 'sqlite') {
      checkDescriptionIndex(db);
      return;
    }
    const searched = await runListRead(db, function* () {
      // Only a bitmap scan is left, and only the trigram index can serve this condition.
      yield* execute(sql`SET LOCAL enable_seqscan = off`);
      yield* execute(sql`SET LOCAL enable_indexscan = off`);
      const search = sql`SELECT count(*) AS n FROM events WHERE description ILIKE '%looked up order%'`;
      const plan = yield* selectRows(sql`EXPLAIN ${search}`);
      // Each time partition's copy of the index (events_history_description_trgm_idx, ...).
      expect(JSON.stringify(plan)).toMatch(
        /Bitmap Index Scan on events_\w*description_(trgm_)?idx/,
      );
      const [found] = yield* selectRows<{ n: number }>(search);
      return found!.n;
    });
    const [described] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM events WHERE description IS NOT NULL`,
    );
    expect(searched).toBe(described!.n);
  });
}

it('stores every event exactly once after a SIGKILL and a re-run', async () => {
  const killed = startImport();
  const exited = new Promise((resolve) => killed.once('exit', resolve));
  // Killed once a few batches are committed, well before the end of the file.
  while ((await stored()).events < 5 * BATCH) {
    if (killed.exitCode !== null) throw new Error('the import ended before it could be killed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  killed.kill('SIGKILL');
  await exited;
  await untilImportStatementsEnd();
  const atKill = await stored();
  expect(atKill.events).toBeLessThan(LINES);
  expect(atKill.events % BATCH).toBe(0);

  const rerun = startImport();
  let stdout = '';
  rerun.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise((resolve) => rerun.once('exit', resolve));
  expect(code).toBe(0);
  expect(stdout).toContain(
    `imported ${(LINES - atKill.events).toLocaleString('en-US')} events, skipped ${atKill.events.toLocaleString('en-US')} duplicates`,
  );
  expect(await stored()).toEqual({ events: LINES, keys: LINES });

  await expectDescriptionIndexMatches();
}, 120_000);
