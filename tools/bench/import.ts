// The import: `pnpm bench import [--events 1000000] [--import-lines 1000000] [--database
// postgres://...]`. What it builds, times and prints: README.md's table of commands.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { buildEvents, importArguments, writeImportFile } from './bench-events.js';
import { SERVER_DIR, options, seeded, withBenchDatabase } from './harness.js';

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, {
    events: 1_000_000,
    'import-lines': 1_000_000,
    database: undefined,
  });
  const { events: perOrganization, 'import-lines': importLines } = values;
  if (importLines === 0) throw new Error('--import-lines takes a number above 0');
  await withBenchDatabase('import', values.database, async (database) => {
    await seeded(database.url, async (db) => {
      const ids: number[] = [];
      for (const name of ['Bench A', 'Bench B']) ids.push((await createOrganization(db, name)).id);
      if (perOrganization > 0) await buildEvents(db, ids, perOrganization);
    });
    const file = join(database.directory, 'import.ndjson');
    await writeImportFile(file, importLines);
    console.log(`\nimport of ${importLines} NDJSON lines into the same database (new events):`);
    const result = spawnSync(
      '/usr/bin/time',
      ['-v', process.execPath, ...(await importArguments(file, 'Bench A'))],
      { cwd: SERVER_DIR, env: { ...process.env, DATABASE_URL: database.url }, encoding: 'utf8' },
    );
    const peakKiB = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1]);
    console.log(`${result.stdout.trim()}; peak RSS ${(peakKiB / 1024).toFixed(0)} MiB`);
  });
}
