// The streaming replica of the PostgreSQL test server (scripts/postgres-replica-setup.sh), for
// the tests of DATABASE_READ_URL: found by AGENTLINE_TEST_POSTGRES_READ_URL, which
// vitest.config.ts sets when one answers (those tests are skipped without it).

import pg from 'pg';

export const READ_ADMIN_URL = process.env.AGENTLINE_TEST_POSTGRES_READ_URL;

/** The same database on the replica. */
export function onReplica(primaryUrl: string): string {
  const url = new URL(primaryUrl);
  url.host = new URL(READ_ADMIN_URL!).host;
  return url.toString();
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
