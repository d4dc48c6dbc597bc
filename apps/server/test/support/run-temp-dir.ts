// Global set-up of both test projects: the SQLite databases of the run's tests
// (freshDatabaseUrl) go under one folder of the run, which the teardown removes. Most test files
// leave their database files behind (a server process of theirs may still hold one as they end),
// and on a developer's machine the leftovers of earlier runs had grown to 4.7 GB.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a test run's workers make their SQLite databases. */
export const RUN_TEMP_DIR_VARIABLE = 'AGENTLINE_TEST_TEMP_DIR';

export default function setup(): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'agentline-test-run-'));
  process.env[RUN_TEMP_DIR_VARIABLE] = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
