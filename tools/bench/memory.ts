// A server process's resident size while one key asks many distinct query strings of the events
// list (test/support/distinct-queries.ts: unknown parameters of their own, the same query in
// other orders, queries of their own with long search values), each padded to `--padding`
// characters: what a client could grow the kept answers and the list caches by. Prints the RSS
// at the start, every `--every` requests and at the end.
//
//   pnpm bench:memory [--requests 200000] [--padding 7000] [--connections 8] [--every 20000]
//     [--database postgres://...] [--kept-answers-max-bytes N (default: the server's)]

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { distinctEventsQuery, sendAll } from '../../apps/server/test/support/distinct-queries.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { createBenchDatabase } from './bench-database.js';
import { benchTenant } from './bench-tenant.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200000' },
    padding: { type: 'string', default: '7000' },
    connections: { type: 'string', default: '8' },
    every: { type: 'string', default: '20000' },
    database: { type: 'string' },
    'kept-answers-max-bytes': { type: 'string' },
  },
});
const requests = Number(values.requests);
const padding = Number(values.padding);
const every = Number(values.every);

const scratch = mkdtempSync(`${tmpdir()}/agentline-memory-`);
const database = await createBenchDatabase(scratch, values.database, 'memory');
const db = createDb(database.url);
await migrateDb(db);
const { key } = await benchTenant(db, 'Memory');
await db.close();

const env: Record<string, string> = { DATABASE_URL: database.url };
if (values['kept-answers-max-bytes']) env.KEPT_ANSWERS_MAX_BYTES = values['kept-answers-max-bytes'];
const server = await startServerProcess(env, { keepOutput: false });
const started = performance.now();
const line = (label: string) =>
  console.log(
    `${label.padEnd(24)} RSS ${server.rssMiB().toFixed(0).padStart(5)} MiB  (${((performance.now() - started) / 1000).toFixed(0)} s)`,
  );
try {
  line('start');
  await sendAll(
    server.baseUrl,
    key,
    requests,
    (i) => `/api/v1/events/${distinctEventsQuery(i, padding).query}`,
    {
      connections: Number(values.connections),
      each: (i) => {
        if ((i + 1) % every === 0) line(`after ${i + 1} requests`);
      },
    },
  );
  line('end');
} finally {
  await server.stop();
  await database.drop();
  rmSync(scratch, { recursive: true, force: true });
}
