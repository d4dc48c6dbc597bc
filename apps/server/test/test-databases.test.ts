// The test support's clean-up: a PostgreSQL database is dropped whether or not a session still
// holds it (a killed run's), since each run drops what the runs before it left behind; a SQLite
// test database lies in the run's folder, which the run removes (support/run-temp-dir.ts).

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { TestProject } from 'vitest/node';
import setUpPostgres, { DROP_RUN_DATABASES } from './support/postgres-global-setup.js';
import { RUN_TEMP_DIR_VARIABLE } from './support/run-temp-dir.js';
import {
  DATABASE_MAKER_NAME,
  directUrl,
  dropDatabase,
  freshDatabaseUrl,
  onPostgres,
  onSqlite,
  POSTGRES_ADMIN_URL,
  runDatabasePrefix,
  templateDatabase,
  withAdmin,
} from './support/test-database.js';

const ADMIN_URL = POSTGRES_ADMIN_URL!;

describe.runIf(onSqlite)('a SQLite test database', () => {
  it("lies in the run's folder, which the run's teardown removes", async () => {
    const runFolder = process.env[RUN_TEMP_DIR_VARIABLE];
    expect(runFolder).toBeDefined();
    const file = await freshDatabaseUrl();
    expect(existsSync(dirname(file))).toBe(true);
    expect(relative(runFolder!, file).startsWith('..')).toBe(false);
  });
});

async function databaseExists(name: string): Promise<boolean> {
  const { rows } = await withAdmin(ADMIN_URL, (admin) =>
    admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]),
  );
  return rows.length === 1;
}

// A DROP DATABASE waits for a checkpoint, which on a machine busy writing can take most of the
// default 30 s.
describe.runIf(onPostgres)('dropDatabase', { timeout: 90_000 }, () => {
  it('drops an unused database with a plain DROP', async () => {
    const name = new URL(await freshDatabaseUrl()).pathname.slice(1);
    await withAdmin(ADMIN_URL, (admin) => dropDatabase(admin, name));
    expect(await databaseExists(name)).toBe(false);
  });

  // PostgreSQL waits 5 s for the session to leave before the plain DROP gives up.
  it('drops a database a session still holds, ending the session', async () => {
    const url = await freshDatabaseUrl();
    const name = new URL(url).pathname.slice(1);
    // A session of its own on PostgreSQL: through PgBouncer, the client's connection would be to
    // PgBouncer, which outlives the server connection the DROP ends.
    const holder = new pg.Client({ connectionString: directUrl(url) });
    await holder.connect();
    // Every error the ended session reports is expected; the first says why it ended.
    const ended = new Promise<Error>((resolve) => holder.on('error', resolve));
    await withAdmin(ADMIN_URL, (admin) => dropDatabase(admin, name));
    expect(await databaseExists(name)).toBe(false);
    expect((await ended).message).toMatch(/terminat/);
    await holder.end().catch(() => {});
  });
});

describe.runIf(onPostgres)("a worker's database maker", () => {
  const makerSessions = () =>
    withAdmin(ADMIN_URL, (admin) =>
      admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [
        DATABASE_MAKER_NAME,
      ]),
    ).then(({ rows }) => rows.map(({ pid }) => pid));

  it('makes every database on one connection, and a new one once that ends', async () => {
    await freshDatabaseUrl();
    const [first, ...others] = await makerSessions();
    expect(others).toEqual([]);
    await freshDatabaseUrl();
    expect(await makerSessions()).toEqual([first]);

    await withAdmin(ADMIN_URL, (admin) =>
      admin.query('SELECT pg_terminate_backend($1, 5000)', [first]),
    );
    // The call that meets the ended connection may fail with it; the next makes a new one.
    await freshDatabaseUrl().catch(() => {});
    const url = await freshDatabaseUrl();
    expect(await databaseExists(new URL(url).pathname.slice(1))).toBe(true);
    const now = await makerSessions();
    expect(now).toHaveLength(1);
    expect(now).not.toContain(first);
  });
});

describe.runIf(onPostgres)('drop-run-databases.ts', { timeout: 90_000 }, () => {
  const [command, ...args] = DROP_RUN_DATABASES;
  const run = (env: Record<string, string>) =>
    promisify(execFile)(command, args, { env: { PATH: process.env.PATH!, ...env } });

  it("drops the named run's databases and leaves other runs' alone", async () => {
    const finishedRun = `finished${process.pid}`;
    const names = [1, 2].map((n) => `${runDatabasePrefix(finishedRun)}${n}`);
    await withAdmin(ADMIN_URL, async (admin) => {
      for (const name of names) await admin.query(`CREATE DATABASE "${name}"`);
    });
    await run({ AGENTLINE_TEST_POSTGRES_URL: ADMIN_URL, AGENTLINE_TEST_RUN: finishedRun });
    for (const name of names) expect(await databaseExists(name)).toBe(false);
    expect(await databaseExists(templateDatabase(process.env.AGENTLINE_TEST_RUN!))).toBe(true);
  });

  it("keeps a run's databases when told to, and a later run's set-up drops them", async () => {
    // Run ids above any pid: no such process runs, as after a finished run.
    const runOf = (runId: string, keep: boolean) =>
      ({
        config: {
          env: {
            AGENTLINE_TEST_POSTGRES_URL: ADMIN_URL,
            AGENTLINE_TEST_RUN: runId,
            ...(keep ? { AGENTLINE_TEST_KEEP_DATABASES: 'true' } : {}),
          },
        },
      }) as unknown as TestProject;
    const kept = `${runDatabasePrefix('999999991')}1`;
    const teardown = await setUpPostgres(runOf('999999991', true));
    await withAdmin(ADMIN_URL, (admin) => admin.query(`CREATE DATABASE "${kept}"`));
    expect(teardown()).toBeNull();
    expect(await databaseExists(kept)).toBe(true);
    expect(await databaseExists(templateDatabase('999999991'))).toBe(true);

    const laterTeardown = await setUpPostgres(runOf('999999992', false));
    expect(await databaseExists(kept)).toBe(false);
    expect(await databaseExists(templateDatabase('999999991'))).toBe(false);
    const dropper = laterTeardown()!;
    const exitCode = await new Promise((resolve) => dropper.once('exit', resolve));
    expect(exitCode).toBe(0);
    expect(await databaseExists(templateDatabase('999999992'))).toBe(false);
  });

  it('says what to set when the server or the run is missing', async () => {
    const failure = (await run({ AGENTLINE_TEST_RUN: '1' }).catch((error: unknown) => error)) as {
      code?: number;
      stderr?: string;
    };
    expect(failure.code).toBe(2);
    expect(failure.stderr).toContain('set AGENTLINE_TEST_POSTGRES_URL and AGENTLINE_TEST_RUN');
  });
});
