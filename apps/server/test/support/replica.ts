// The streaming replica of the PostgreSQL tests (scripts/postgres-replica-setup.sh), for the tests
// of DATABASE_READ_URL: found by AGENTLINE_TEST_POSTGRES_READ_URL, which vitest.config.ts sets
// when one answers (those tests are skipped without it). It follows the test server, as the
// script makes it by default, or a PostgreSQL server of its own, as CI's does (PRIMARY_CLUSTER),
// so that it replays only these tests' writes and not every test database's; the tests make
// their databases on whichever it follows.

import pg from 'pg';
import { dropDatabase, freshDatabaseUrl, POSTGRES_ADMIN_URL, withAdmin } from './test-database.js';

export const READ_ADMIN_URL = process.env.AGENTLINE_TEST_POSTGRES_READ_URL;

/** The same database on the replica. */
function onReplica(primaryUrl: string): string {
  const url = new URL(primaryUrl);
  url.host = new URL(READ_ADMIN_URL!).host;
  return url.toString();
}

/**
 * The primary the replica at `readAdminUrl` streams from, as `adminUrl`'s role and database reach
 * it, read from the replica's WAL receiver (the script lets the role see where it connects). For
 * a replica that does not show it (set up before the script granted that), `adminUrl` itself.
 * Waits for a receiver that is reconnecting.
 */
export async function replicaPrimary(adminUrl: string, readAdminUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: readAdminUrl });
  await client.connect();
  try {
    const deadline = performance.now() + 30_000;
    for (;;) {
      const { rows } = await client.query<{ host: string | null; port: number | null }>(
        'SELECT sender_host AS host, sender_port AS port FROM pg_stat_wal_receiver',
      );
      const sender = rows[0];
      if (sender) {
        if (sender.host === null || sender.port === null) return adminUrl;
        const url = new URL(adminUrl);
        url.hostname = sender.host;
        url.port = String(sender.port);
        return url.toString();
      }
      if (performance.now() > deadline) {
        throw new Error(`the replica at ${new URL(readAdminUrl).host} streams from no primary`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await client.end();
  }
}

/** A fresh database the replica has too. */
export interface ReplicatedDatabase {
  /** Its URL on the primary the replica follows. */
  primaryUrl: string;
  /** Its URL on the replica. */
  readUrl: string;
  drop(): Promise<void>;
}

/**
 * A fresh migrated database on the primary the replica follows. Dropped by `drop()` (on the test
 * server, the run's teardown would drop it too; the next run's set-up drops a killed run's).
 */
export async function freshReplicatedDatabase(): Promise<ReplicatedDatabase> {
  const primary = await replicaPrimary(POSTGRES_ADMIN_URL!, READ_ADMIN_URL!);
  const primaryUrl = await freshDatabaseUrl({ on: primary });
  const name = new URL(primaryUrl).pathname.slice(1);
  return {
    primaryUrl,
    readUrl: onReplica(primaryUrl),
    drop: () => withAdmin(primary, (admin) => dropDatabase(admin, name)),
  };
}

/**
 * A connection to `readUrl` on the replica, once it has the database: a new database reaches
 * the replica with the primary's next WAL.
 */
export async function replicaConnection(readUrl: string, ms = 30_000): Promise<pg.Client> {
  const deadline = performance.now() + ms;
  for (;;) {
    const client = new pg.Client({ connectionString: readUrl });
    try {
      await client.connect();
      return client;
    } catch (error) {
      if (performance.now() > deadline) {
        throw new Error(`the replica never had ${new URL(readUrl).pathname}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
