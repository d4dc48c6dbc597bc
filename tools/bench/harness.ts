// What every benchmark sets up: its options, a run folder with the database in it (a SQLite file,
// or a new database on a PostgreSQL server, whose role needs CREATEDB, dropped at the end),
// migrated and seeded, and the real server as a process of its own on it.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDb, isPostgresUrl, type Db } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/migrate.js';
import {
  startServerProcess,
  type ServerProcess,
} from '../../apps/server/test/support/server-process.js';
import {
  dropDatabase,
  postgresUrlOf,
  withAdmin,
} from '../../apps/server/test/support/test-database.js';

/** The server's folder, where its CLI and modules run. */
export const SERVER_DIR = fileURLToPath(new URL('../../apps/server', import.meta.url));

export const sleep = (milliseconds: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, milliseconds)));

type Defaults = Record<string, number | string | boolean | string[] | undefined>;
type Parsed<D extends Defaults> = {
  [K in keyof D]: D[K] extends undefined ? string | undefined : D[K];
};

/**
 * `args` parsed by node:util's parseArgs, each option's type taken from its default in `defaults`
 * (a number, a string, a boolean flag, a list for repeated options; `undefined`: a string with
 * none). `--database`, when there is one, must be a postgres:// URL: without it the bench uses
 * SQLite.
 */
export function options<D extends Defaults>(args: readonly string[], defaults: D): Parsed<D> {
  const config = Object.fromEntries(
    Object.entries(defaults).map(([name, value]) => [
      name,
      {
        type: typeof value === 'boolean' ? 'boolean' : 'string',
        multiple: Array.isArray(value),
        ...(value === undefined ? {} : { default: typeof value === 'number' ? `${value}` : value }),
      } as const,
    ]),
  );
  const { values } = parseArgs({ args: [...args], options: config });
  for (const [name, value] of Object.entries(defaults)) {
    if (typeof value !== 'number') continue;
    const number = Number(values[name]);
    if (!(number >= 0)) throw new Error(`--${name} takes a number`);
    values[name] = number as never;
  }
  const database = values.database;
  if (typeof database === 'string' && !isPostgresUrl(database)) {
    throw new Error('--database takes a postgres:// URL; without it the bench uses SQLite');
  }
  return values as Parsed<D>;
}

export interface BenchDatabase {
  url: string;
  kind: 'sqlite' | 'postgres';
  /** The run's folder, removed at the end. */
  directory: string;
  /**
   * Waits until no query of the server is left running. autocannon stops with up to one request
   * per connection still in the server: on PostgreSQL, 16 middle pages outlast a whole run and
   * would slow the next shapes. SQLite answers in order inside the server, so nothing is left.
   */
  settle: () => Promise<void>;
  /** The database's size on disk in bytes (a SQLite file with its write-ahead log). */
  sizeBytes: () => Promise<number>;
}

/**
 * `body` on a new database named after `bench`: SQLite in the run's folder, or with `postgresUrl`
 * a new database on that server. The database and the folder are removed after it.
 */
export async function withBenchDatabase<T>(
  bench: string,
  postgresUrl: string | undefined,
  body: (database: BenchDatabase) => Promise<T>,
): Promise<T> {
  const directory = mkdtempSync(join(tmpdir(), `agentline-bench-${bench}-`));
  const name = `agentline_bench_${bench.replaceAll('-', '_')}_${process.pid}`;
  let drop = async () => {};
  try {
    let database: BenchDatabase;
    if (postgresUrl === undefined) {
      const url = join(directory, 'bench.db');
      database = {
        url,
        kind: 'sqlite',
        directory,
        settle: async () => {},
        sizeBytes: async () =>
          ['', '-wal'].reduce(
            (total, end) => total + (statSync(url + end, { throwIfNoEntry: false })?.size ?? 0),
            0,
          ),
      };
    } else {
      await withAdmin(postgresUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
      drop = () => withAdmin(postgresUrl, (admin) => dropDatabase(admin, name));
      database = {
        url: postgresUrlOf(postgresUrl, name),
        kind: 'postgres',
        directory,
        settle: () =>
          withAdmin(postgresUrl, async (admin) => {
            const running = `SELECT count(*)::int AS n FROM pg_stat_activity
                         WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`;
            while ((await admin.query<{ n: number }>(running, [name])).rows[0]!.n > 0) {
              await sleep(100);
            }
          }),
        sizeBytes: () =>
          withAdmin(postgresUrl, async (admin) => {
            const size = await admin.query<{ bytes: string }>(
              'SELECT pg_database_size($1)::text AS bytes',
              [name],
            );
            return Number(size.rows[0]!.bytes);
          }),
      };
    }
    return await body(database);
  } finally {
    await drop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The database at `url` migrated, then `seed` on a connection of its own, closed after it. */
export async function seeded<T>(url: string, seed: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(url);
  try {
    await migrateDb(db);
    return await seed(db);
  } finally {
    await db.close();
  }
}

/** How long vacuumWhenSettled waits for a replica's oldest snapshot to pass the seed. */
const REPLICA_SETTLE_MS = 30_000;

/**
 * `VACUUM (ANALYZE) tables`, as autovacuum soon would after a bulk load (statistics, and the
 * visibility map that lets counts and skipped rows be read from indexes alone), once every
 * snapshot sees the rows just written. A streaming replica with hot_standby_feedback holds the
 * primary's horizon at its oldest snapshot, which trails a bulk load by up to its status interval
 * (10 s): a VACUUM before then marks no page all-visible, and every index-only scan of the
 * benchmark would read the table too (at 20,000 prompts, 19,550 table reads for a middle page).
 */
export async function vacuumWhenSettled(db: Db, tables = ''): Promise<void> {
  if (db.kind !== 'postgres') return;
  const { rows } = await db.pool.query<{ xid: string }>('SELECT txid_current()::text AS xid');
  const written = rows[0]!.xid;
  const behind = `SELECT count(*)::int AS n FROM pg_replication_slots
                  WHERE xmin IS NOT NULL AND age(xmin) > txid_current() - $1::bigint`;
  const deadline = performance.now() + REPLICA_SETTLE_MS;
  while ((await db.pool.query<{ n: number }>(behind, [written])).rows[0]!.n > 0) {
    if (performance.now() > deadline) {
      console.warn(
        `a replication slot's oldest snapshot is still before the seed: vacuuming anyway`,
      );
      break;
    }
    await sleep(200);
  }
  await db.pool.query(`VACUUM (ANALYZE) ${tables}`);
}

/**
 * `body` beside the real server as a process of its own on `url` with `env` added, its access
 * log drained unread (splitting it would take the load generator's time); stopped after it.
 */
export async function withServer<T>(
  url: string,
  env: Record<string, string>,
  body: (server: ServerProcess) => Promise<T>,
): Promise<T> {
  const server = await startServerProcess({ DATABASE_URL: url, ...env }, { keepOutput: false });
  try {
    return await body(server);
  } finally {
    await server.stop();
  }
}
