// Pages by number at every depth of a large events list: `pnpm bench:deep-pages [--events
// 10000000] [--samples 200] [--database postgres://...]`. Writes `--events` events into one
// organization (the events benchmark's data, a year of timestamps: bench-events.ts), starts the
// real server and asks, through the SDK with its defaults and one request at a time, for
// `--samples` different pages near the start, the middle and the end of the default order and of
// a `category` search: each page once, so no answer is a kept one. Prints p50, p99 and max per
// depth and the ratio of each depth's p99 to the first pages'.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { createClient, type EventListQuery } from '../../packages/sdk/src/index.js';
import { createBenchDatabase } from './bench-database.js';
import { buildEvents } from './bench-events.js';
import { benchTenant } from './bench-tenant.js';
import { Latencies } from './open-loop.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    samples: { type: 'string', default: '200' },
    database: { type: 'string' },
  },
});
const eventCount = Number(values.events);
const samples = Number(values.samples);
const LIMIT = 25;

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-deep-pages-'));
const database = await createBenchDatabase(directory, values.database, 'deep_pages');
const setup = createDb(database.url);
await migrateDb(setup);
const tenant = await benchTenant(setup, 'Bench');
await buildEvents(setup, [tenant.organizationId], eventCount);
await setup.close();
await database.settle();

const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
const client = createClient({ apiKey: tenant.key, baseUrl: server.baseUrl });
try {
  const shapes: Array<[string, EventListQuery]> = [
    ['default order', {}],
    ['category "tool"', { search_fields: ['category'], search_field_values: ['tool'] }],
  ];
  console.log(
    `pages of ${LIMIT} on ${setup.kind}: ${eventCount} events, ${samples} different pages per depth, one request at a time`,
  );
  console.log('| shape | depth (pages) | p50 ms | p99 ms | max ms | p99 / first pages p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const [label, query] of shapes) {
    const { total_count: total } = await client.events.list({ ...query, limit: LIMIT });
    if (total == null) throw new Error(`${label}: the list gave no total_count`);
    const lastPage = Math.ceil(total / LIMIT) - 1;
    const middle = Math.floor(lastPage / 2) - Math.floor(samples / 2);
    const depths: Array<[string, number]> = [
      ['first', 0],
      ['middle', middle],
      ['last', lastPage - samples + 1],
    ];
    let firstP99 = 0;
    for (const [depth, from] of depths) {
      const times = new Latencies();
      for (let page = from; page < from + samples; page += 1) {
        const started = performance.now();
        const answer = await client.events.list({ ...query, limit: LIMIT, page });
        times.add(performance.now() - started);
        if (answer.items.length === 0 || answer.total_count !== total) {
          throw new Error(`${label}, page ${page}: ${answer.items.length} items of ${total}`);
        }
      }
      const p99 = times.percentile(99);
      if (depth === 'first') firstP99 = p99;
      console.log(
        `| ${label} (${total}) | ${depth} (${from}-${from + samples - 1}) | ${times.percentile(50).toFixed(1)} | ${p99.toFixed(1)} | ${times.percentile(100).toFixed(1)} | ${(p99 / firstP99).toFixed(2)} |`,
      );
    }
  }
} finally {
  await server.stop();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
