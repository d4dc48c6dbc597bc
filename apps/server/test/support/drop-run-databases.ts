// Drops one finished test run's PostgreSQL databases: AGENTLINE_TEST_RUN names the run and
// AGENTLINE_TEST_POSTGRES_URL the server. The postgres project's global teardown starts it
// detached (postgres-global-setup.ts), so that a run ends when its last test does.
//
//   AGENTLINE_TEST_POSTGRES_URL=postgres://... AGENTLINE_TEST_RUN=12345 tsx test/support/drop-run-databases.ts

import { dropTestDatabases } from './postgres-global-setup.js';

const { AGENTLINE_TEST_POSTGRES_URL: adminUrl, AGENTLINE_TEST_RUN: runId } = process.env;
if (!adminUrl || !runId) {
  console.error('drop-run-databases: set AGENTLINE_TEST_POSTGRES_URL and AGENTLINE_TEST_RUN');
  process.exit(2);
}
await dropTestDatabases(adminUrl, (other) => other === runId);
