// The database a benchmark runs on: a SQLite file in the run's folder, or a new database on a
// PostgreSQL server (the role needs CREATEDB), dropped at the end.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  dropDatabase,
  postgresUrlOf,
  withAdmin,
} from '../../apps/server/test/support/test-database.js';

export interface BenchDatabase {
  url: string;
  drop: () => Promise<void>;
  /**
   * Waits until no query of the server is left running. autocannon stops with up to one request
   * per connection still in the server: on PostgreSQL, 16 middle pages outlast a whole run and
   * would slow the next shapes. SQLite answers in order inside the server, so nothing is left.
   */
  settle: () => Promise<void>;
  /** The database's size on disk in bytes (a SQLite file with its write-ahead log). */
  sizeBytes: () => Promise<number>;
}

/** `postgresUrl` absent: SQLite in `directory`. `bench` names the PostgreSQL database. */
export async function createBenchDatabase(
  directory: string,
  postgresUrl: string | undefined,
  bench: string,
): Promise<BenchDatabase> {
  if (postgresUrl === undefined) {
    const url = join(directory, 'bench.db');
    return {
      url,
      drop: async () => {},
      settle: async () => {},
      sizeBytes: async () =>
        ['', '-wal'].reduce(
          (total, suffix) => total + (statSync(url + suffix, { throwIfNoEntry: false })?.size ?? 0),
          0,
        ),
    };
  }
  const name = `agentline_bench_${bench}_${process.pid}`;
  await withAdmin(postgresUrl, (admin) => admin.query(`CREATE DATABASE "${name}"`));
  return {
    url: postgresUrlOf(postgresUrl, name),
    drop: () => withAdmin(postgresUrl, (admin) => dropDatabase(admin, name)),
    settle: () =>
      withAdmin(postgresUrl, async (admin) => {
        const running = `SELECT count(*)::int AS n FROM pg_stat_activity
                         WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`;
        while ((await admin.query<{ n: number }>(running, [name])).rows[0]!.n > 0) {
          await new Promise((resolve) => setTimeout(resolve, 100));
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
