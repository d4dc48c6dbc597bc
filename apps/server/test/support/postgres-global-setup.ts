// Global set-up of the `postgres` test project: drops the databases an earlier run left behind,
// builds the migrated template every test database is copied from, and drops them all at the end.

import pg from 'pg';
import { createDb, migrateDb } from '../../src/db/client.js';
import { postgresUrlOf, TEMPLATE_DATABASE, TEST_DATABASE_PREFIX } from './test-database.js';

async function withAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

async function dropTestDatabases(adminUrl: string): Promise<void> {
  await withAdmin(adminUrl, async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE $1`,
      [`${TEST_DATABASE_PREFIX}%`],
    );
    for (const { datname } of rows) {
      await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
}

export default async function setup(): Promise<() => Promise<void>> {
  const adminUrl = process.env.AGENTLINE_TEST_POSTGRES_URL!;
  await dropTestDatabases(adminUrl);
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${TEMPLATE_DATABASE}"`));
  const template = createDb(postgresUrlOf(adminUrl, TEMPLATE_DATABASE));
  await migrateDb(template);
  await template.close();
  return () => dropTestDatabases(adminUrl);
}
