// The import: `pnpm bench:events [--events 1000000] [--import-lines 1000000] [--database
// postgres://user:password@host:5432/postgres]`. Builds two organizations of `--events` generated
// events each (bench-events.ts; `--events 0`: a new, empty database), then times `agentline events
// import` of `--import-lines` new NDJSON lines into the first, the CLI of the server's bundle under
// `/usr/bin/time -v`: its own summary line and its peak RSS (`--import-lines 7200000` makes a 2 GB
// file). The database is a temporary SQLite file, or with --database a new database on that
// PostgreSQL server (the role needs CREATEDB), dropped at the end.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDb, isPostgresUrl } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { createBenchDatabase } from './bench-database.js';
import { buildEvents, importArguments, writeImportFile } from './bench-events.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    'import-lines': { type: 'string', default: '1000000' },
    database: { type: 'string' },
  },
});
if (values.database !== undefined && !isPostgresUrl(values.database)) {
  throw new Error('--database takes a postgres:// URL; without it the bench uses SQLite');
}
const perOrganization = Number(values.events);
const importLines = Number(values['import-lines']);
if (!(importLines > 0)) throw new Error('--import-lines takes a number above 0');
const SERVER_DIR = fileURLToPath(new URL('../../apps/server', import.meta.url));

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-events-'));
const database = await createBenchDatabase(directory, values.database, 'events');
try {
  const db = createDb(database.url);
  await migrateDb(db);
  const organizations = [
    await createOrganization(db, 'Bench A'),
    await createOrganization(db, 'Bench B'),
  ];
  if (perOrganization > 0) {
    await buildEvents(
      db,
      organizations.map((o) => o.id),
      perOrganization,
    );
  }
  await db.close();
  const file = join(directory, 'import.ndjson');
  await writeImportFile(file, importLines);
  console.log(`\nimport of ${importLines} NDJSON lines into the same database (new events):`);
  const result = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, ...(await importArguments(file, 'Bench A'))],
    { cwd: SERVER_DIR, env: { ...process.env, DATABASE_URL: database.url }, encoding: 'utf8' },
  );
  const peakKiB = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1]);
  console.log(`${result.stdout.trim()}; peak RSS ${(peakKiB / 1024).toFixed(0)} MiB`);
} finally {
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
