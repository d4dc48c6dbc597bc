// Global set-up of the `postgres` test project: drops the databases of earlier runs that are gone
// (a killed run leaves its databases behind; on the replica's primary too, where that is a server
// of its own: support/replica.ts), builds the migrated template this run's test
// databases are copied from, and at the end hands this run's databases to a process of their own
// to drop (drop-run-databases.ts), unless AGENTLINE_TEST_KEEP_DATABASES keeps them. Runs at the
// same time on one server (two terminals, several agents) each keep to their own names.

import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { createDb } from '../../src/db/engine/client.js';
import { migrateDb } from '../../src/db/migrate.js';
import { replicaPrimary } from './replica.js';
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
export async function dropTestDatabases(
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

/**
 * Set-up; the teardown it returns gives the process it starts to drop the run's databases, or
 * null when it keeps them.
 */
export default async function setup(project: TestProject): Promise<() => ChildProcess | null> {
  // The project's env reaches its test workers, not this process: read it from the config.
  const {
    AGENTLINE_TEST_POSTGRES_URL: adminUrl,
    AGENTLINE_TEST_POSTGRES_READ_URL: readUrl,
    AGENTLINE_TEST_RUN: runId,
    AGENTLINE_TEST_KEEP_DATABASES: keep,
  } = project.config.env;
  if (!adminUrl || !runId) throw new Error('the postgres project sets its URL and run id');
  const servers = new Set([
    adminUrl,
    ...(readUrl ? [await replicaPrimary(adminUrl, readUrl)] : []),
  ]);
  for (const server of servers) {
    await dropTestDatabases(server, (other) => !/^\d+$/.test(other) || !isRunning(Number(other)));
  }
  await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${templateDatabase(runId)}"`));
  const template = createDb(postgresUrlOf(adminUrl, templateDatabase(runId)));
  await migrateDb(template);
  await template.close();
  // Kept, they are dropped by the next run's set-up above, as a killed run's are.
  return () => (keep === 'true' ? null : dropInBackground(adminUrl, runId));
}

/** The command that drops one run's databases (drop-run-databases.ts, through tsx). */
export const DROP_RUN_DATABASES = [
  fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url)),
  fileURLToPath(new URL('./drop-run-databases.ts', import.meta.url)),
] as const;

/**
 * Starts drop-run-databases.ts for this run's databases and returns without waiting for it: each
 * DROP DATABASE waits for a checkpoint and removes some 500 files, so a run's hundred-odd took 40-60
 * s after its last test (docs/benchmarks.md). The URL goes in the environment, not on a command
 * line others can read. Should the process fail, the next run's set-up drops what it left.
 */
function dropInBackground(adminUrl: string, runId: string): ChildProcess {
  const [command, ...args] = DROP_RUN_DATABASES;
  const child = spawn(command, args, {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, AGENTLINE_TEST_POSTGRES_URL: adminUrl, AGENTLINE_TEST_RUN: runId },
  });
  child.unref();
  return child;
}
