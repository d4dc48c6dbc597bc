// Global set-up of both test projects: the SQLite databases of the run's tests
// (freshDatabaseUrl) and the files tests write (runTempFolder) go under one folder of the run,
// which the teardown removes. Most test files
// leave their database files behind (a server process of theirs may still hold one as they end),
// and on a developer's machine the leftovers of earlier runs had grown to 4.7 GB.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a test run's workers make their SQLite databases. */
export const RUN_TEMP_DIR_VARIABLE = 'AGENTLINE_TEST_TEMP_DIR';

/** A new folder for a test's files, under the run's folder (the system's outside a run). */
export function runTempFolder(prefix: string): string {
  return mkdtempSync(join(process.env[RUN_TEMP_DIR_VARIABLE] ?? tmpdir(), prefix));
}

export default function setup(): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'agentline-test-run-'));
  process.env[RUN_TEMP_DIR_VARIABLE] = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
