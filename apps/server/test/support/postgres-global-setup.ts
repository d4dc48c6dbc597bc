// Global set-up of the `postgres` test project: drops the databases of earlier runs that are gone
// (a killed run leaves its databases behind), builds the migrated template this run's test
// databases are copied from, and drops this run's databases at the end. Runs at the same time on
// one server (two terminals, several agents) each keep to their own names.

import type { TestProject } from 'vitest/node';
import { createDb } from '../../src/db/engine/client.js';
import { migrateDb } from '../../src/db/migrate.js';
import {
  dropDatabase,
  postgresUrlOf,
  templateDatabase,
  TEST_DATABASE_PREFIX,
  withAdmin,
} from './test-database.js';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Databases dropped at once, each on a connection of its own. A drop waits mostly on the disk
 * (0.44 s each one after another here, 0.19 s each six at once) and a run leaves over a hundred.
 */
const DROPS_AT_ONCE = 4;

/** Drops the test databases for which `shouldDrop(run id)` holds. */
async function dropTestDatabases(
  adminUrl: string,
  shouldDrop: (runId: string) => boolean,
): Promise<void> {
  const { rows } = await withAdmin(adminUrl, (admin) =>
    admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${TEST_DATABASE_PREFIX}%`,
    ]),
  );
  const names = rows
    .map(({ datname }) => datname)
    .filter((name) => shouldDrop(name.slice(TEST_DATABASE_PREFIX.length).split('_')[0]!));
  await Promise.all(
    Array.from({ length: Math.min(DROPS_AT_ONCE, names.length) }, (_, lane) =>
      withAdmin(adminUrl, async (admin) => {
        for (let i = lane; i < names.length; i += DROPS_AT_ONCE) {
          await dropDatabase(admin, names[i]!);
        }
      }),
    ),
  );
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The project's env reaches its test workers, not this process: read it from the config.
  const { AGENTLINE_TEST_POSTGRES_URL: adminUrl, AGENTLINE_TEST_RUN: runId } = project.config.env;
  if (!adminUrl || !runId) throw new Error('the postgres project sets its URL and run id');
  await dropTestDatabases(adminUrl, (other) => !/^\d+$/.test(other) || !isRunning(Number(other)));
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${templateDatabase(runId)}"`));
  const template = createDb(postgresUrlOf(adminUrl, templateDatabase(runId)));
  await migrateDb(template);
  await template.close();
  return () => dropTestDatabases(adminUrl, (other) => other === runId);
}
