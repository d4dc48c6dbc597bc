import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { isPostgresUrl, type Db } from './src/db/engine/client.js';

// The whole suite runs once per backend. PostgreSQL is reached through
// AGENTLINE_TEST_POSTGRES_URL (a role that may create databases; `.ci/run` and
// scripts/postgres-setup.sh make one), or the URL that script creates by default. If set
// explicitly and unreachable, the run fails; if only the default is unreachable, the PostgreSQL
// half is skipped with a note. The same holds for its streaming replica, which the read replica's
// tests use: AGENTLINE_TEST_POSTGRES_READ_URL, or scripts/postgres-replica-setup.sh's default;
// and for PgBouncer in transaction mode in front of it, which test/pgbouncer.test.ts uses:
// AGENTLINE_TEST_PGBOUNCER_URL, or scripts/pgbouncer-setup.sh's default.
// AGENTLINE_TEST_THROUGH_PGBOUNCER=true sends every PostgreSQL test database's connections
// through that PgBouncer (test/support/test-database.ts). AGENTLINE_TEST_KEEP_DATABASES=true
// leaves a run's databases to the next run's set-up to drop, for a machine thrown away after the
// run (CI), where dropping them would only spend its CPU (test/support/postgres-global-setup.ts).
// AGENTLINE_TEST_BACKENDS=sqlite or =postgres runs that half alone (`.ci/run` runs each on a
// Node.js version of its own).
const DEFAULT_POSTGRES_URL = 'postgres://agentline:agentline@127.0.0.1:5432/agentline';
const DEFAULT_POSTGRES_READ_URL = 'postgres://agentline:agentline@127.0.0.1:5433/agentline';
const DEFAULT_PGBOUNCER_URL = 'postgres://agentline:agentline@127.0.0.1:6432/agentline';

async function reachablePostgresUrl(
  variable: string,
  defaultUrl: string,
  setupScript: string,
): Promise<string | null> {
  const explicit = process.env[variable];
  // The driver reads anything else as a path relative to a host named "base", which hides the
  // real mistake (for example a setup script's chatter captured along with the URL).
  if (explicit !== undefined && !(isPostgresUrl(explicit) && !/\s/.test(explicit))) {
    throw new Error(
      `${variable} must be one postgres:// URL; it holds ${JSON.stringify(explicit.replace(/:[^:@/]*@/, ':***@'))}`,
    );
  }
  const client = new pg.Client({
    connectionString: explicit ?? defaultUrl,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.end();
    return explicit ?? defaultUrl;
  } catch (error) {
    if (explicit) {
      throw new Error(`${variable} is set but PostgreSQL cannot be reached: ${String(error)}`, {
        cause: error,
      });
    }
    console.warn(
      `\nTests that need it skipped: nothing answers at ${defaultUrl} (${String(error)}).\n` +
        `Run \`bash ${setupScript}\` (or set ${variable}) to run them.\n`,
    );
    return null;
  }
}

// Files that read no database, or only SQLite files of their own whatever the backend (the docs
// page in a browser, the CLI as a process): the PostgreSQL project would only run them again.
const BACKEND_INDEPENDENT = [
  'cli-process',
  'cli-progress',
  'contract-validator',
  'db-caches',
  'db-gather-batches',
  'db-rendered-once-sql',
  'db-schema-parity',
  'docs-browser',
  'error-codes',
  'openapi-diff',
  'prompts-validation-tools',
  'spec-enums',
  'spec-owasp-lint',
  'spec-permissions',
  'sqlite-driver',
  'telephony-a2p-rule',
  'webhooks-delivery-attempt',
  'webhooks-delivery-rules',
  'webhooks-delivery-target-address',
].map((name) => `test/${name}.test.ts`);

const shared = {
  include: ['test/**/*.test.ts'],
  globalSetup: ['test/support/run-temp-dir.ts', 'test/support/server-build.ts'],
  setupFiles: ['test/support/threads-from-build.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

type Backend = Db['kind'];

/** The halves to run: both unless AGENTLINE_TEST_BACKENDS names one. */
function wantedBackends(): Backend[] {
  const backends = process.env.AGENTLINE_TEST_BACKENDS;
  if (backends === undefined) return ['sqlite', 'postgres'];
  if (backends === 'sqlite' || backends === 'postgres') return [backends];
  throw new Error(
    `AGENTLINE_TEST_BACKENDS is "sqlite" or "postgres" (that half alone) or unset (both); it holds ${JSON.stringify(backends)}`,
  );
}

/** A variable that is "true" or unset: true when it is "true", and an error for anything else. */
function flagSet(variable: string): boolean {
  const value = process.env[variable];
  if (value === undefined) return false;
  if (value === 'true') return true;
  throw new Error(`${variable} is "true" or unset; it holds ${JSON.stringify(value)}`);
}

function testWorkers(): number {
  const workers = process.env.AGENTLINE_TEST_WORKERS ?? '3';
  if (!/^[1-9]\d*$/.test(workers)) {
    throw new Error(
      `AGENTLINE_TEST_WORKERS is a whole number of 1 or more; it holds ${JSON.stringify(workers)}`,
    );
  }
  return Number(workers);
}

export default defineConfig(async () => {
  const backends = wantedBackends();
  const postgresUrl = backends.includes('postgres')
    ? await reachablePostgresUrl(
        'AGENTLINE_TEST_POSTGRES_URL',
        DEFAULT_POSTGRES_URL,
        'scripts/postgres-setup.sh',
      )
    : null;
  const postgresReadUrl = postgresUrl
    ? await reachablePostgresUrl(
        'AGENTLINE_TEST_POSTGRES_READ_URL',
        DEFAULT_POSTGRES_READ_URL,
        'scripts/postgres-replica-setup.sh',
      )
    : null;
  const pgbouncerUrl = postgresUrl
    ? await reachablePostgresUrl(
        'AGENTLINE_TEST_PGBOUNCER_URL',
        DEFAULT_PGBOUNCER_URL,
        'scripts/pgbouncer-setup.sh',
      )
    : null;
  const through = flagSet('AGENTLINE_TEST_THROUGH_PGBOUNCER');
  if (through && postgresUrl && !pgbouncerUrl) {
    throw new Error('AGENTLINE_TEST_THROUGH_PGBOUNCER is set but no PgBouncer answers');
  }
  if (!backends.includes('sqlite') && !postgresUrl) {
    throw new Error('AGENTLINE_TEST_BACKENDS=postgres, but no PostgreSQL answers (see above)');
  }
  const projects: TestProjectInlineConfiguration[] = [];
  if (backends.includes('sqlite')) {
    projects.push({
      extends: true,
      test: { ...shared, name: 'sqlite', env: { AGENTLINE_TEST_BACKEND: 'sqlite' } },
    });
  }
  if (postgresUrl) {
    projects.push({
      extends: true,
      test: {
        ...shared,
        name: 'postgres',
        exclude: [...configDefaults.exclude, ...BACKEND_INDEPENDENT],
        env: {
          AGENTLINE_TEST_BACKEND: 'postgres',
          AGENTLINE_TEST_POSTGRES_URL: postgresUrl,
          ...(postgresReadUrl ? { AGENTLINE_TEST_POSTGRES_READ_URL: postgresReadUrl } : {}),
          ...(pgbouncerUrl ? { AGENTLINE_TEST_PGBOUNCER_URL: pgbouncerUrl } : {}),
          ...(through ? { AGENTLINE_TEST_THROUGH_PGBOUNCER: 'true' } : {}),
          ...(flagSet('AGENTLINE_TEST_KEEP_DATABASES')
            ? { AGENTLINE_TEST_KEEP_DATABASES: 'true' }
            : {}),
          // Names this run's databases (test/support/test-database.ts).
          AGENTLINE_TEST_RUN: String(process.pid),
        },
        globalSetup: [...shared.globalSetup, 'test/support/postgres-global-setup.ts'],
      },
    });
  }
  return {
    resolve: {
      // Tests drive the SDK from source, so they never run against a stale build.
      // The first match wins: the subpath before the package's name, which prefixes it.
      alias: {
        '@agentline/sdk/webhooks': fileURLToPath(
          new URL('../../packages/sdk/src/webhooks.ts', import.meta.url),
        ),
        '@agentline/sdk': fileURLToPath(
          new URL('../../packages/sdk/src/index.ts', import.meta.url),
        ),
      },
    },
    test: {
      // Tests spawn servers and CLI processes, and a third of the suite's time waits on timers and
      // on them: on the 2-core VM three workers keep both cores busy, where two leave one idle
      // and four gain nothing (docs/benchmarks.md, "Figures behind the code").
      // AGENTLINE_TEST_WORKERS=1 for a run that shares the machine with another, more on a
      // bigger one.
      maxWorkers: testWorkers(),
      // A worker imports the server once for all its files rather than once per file: a third
      // of the suite's CPU. Safe because the server keeps no state in module variables (caches
      // belong to an app or a database handle) and each file makes its own databases.
      isolate: false,
      projects,
    },
  };
});
