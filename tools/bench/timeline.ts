// The results timeline of an experiment with 1,000,000 sessions over 30 days:
// `pnpm bench:timeline [--seconds 10] [--connections 4] [--sessions 1000000]
// [--database postgres://...]`. Stores the sessions straight into the database (routing them
// over HTTP would take the whole run; the same triggers count them), then measures
// GET .../results/timeline over HTTP on 127.0.0.1 for 30 UTC days and for 720 New York hours, and
// checks the buckets add up.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { insertTestSessions } from '../../apps/server/test/support/test-database.js';
import { createClient, type ExperimentTimelineQuery } from '../../packages/sdk/src/index.js';
import { benchRoutingTenant, startSplitExperiment } from './bench-tenant.js';
import { createBenchDatabase } from './bench-database.js';
import { TABLE_HEADER, formatRow, load } from './load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '4' },
    sessions: { type: 'string', default: '1000000' },
    database: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const sessionCount = Number(values.sessions);
const DAYS = 30;
const DAY_MS = 24 * 3_600_000;

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-timeline-'));
const database = await createBenchDatabase(directory, values.database, 'timeline');
const setup = createDb(database.url);
await migrateDb(setup);
const tenant = await benchRoutingTenant(setup, 'Bench');
const { organizationId, key, targetId } = tenant;

const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
const headers = { 'Service-API-Key': key };
const client = createClient({ apiKey: key, baseUrl: server.baseUrl });
try {
  const experiment = await startSplitExperiment(client, tenant, 'bench');

  // The last 30 whole UTC days, one session every 30 days / n, alternating variants.
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const start = end - DAYS * DAY_MS;
  const loadStarted = performance.now();
  const batch = 500;
  for (let first = 0; first < sessionCount; first += batch) {
    const rows = Array.from({ length: Math.min(batch, sessionCount - first) }, (_, i) => {
      const n = first + i;
      const variant = experiment.variants[n % 2]!;
      return {
        id: `bench-${n}`,
        organizationId,
        targetId,
        agentId: variant.agent_id,
        experimentId: experiment.id,
        variantId: variant.id,
        userId: `user-${n}`,
        createdAt: new Date(start + Math.floor((n * DAYS * DAY_MS) / sessionCount)).toISOString(),
      };
    });
    await insertTestSessions(setup, rows);
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  if (setup.kind === 'postgres') {
    // What autovacuum does soon after a bulk load anyway: statistics for the planner and the
    // visibility map; without it the first measurements race autovacuum's own run. The counts
    // table is rewritten: each of its rows was updated by up to 500 sessions in one statement
    // here, which leaves a million dead row versions, where routing updates a row a few times
    // per transaction and page pruning and autovacuum keep it at its live size.
    await setup.pool.query('VACUUM (FULL) experiment_session_counts');
    await setup.pool.query('VACUUM (ANALYZE) sessions, experiment_session_counts');
  }
  await setup.close();
  await database.settle();

  const window = {
    start_datetime: new Date(start).toISOString(),
    end_datetime: new Date(end).toISOString(),
  };
  const shapes: Array<[string, ExperimentTimelineQuery]> = [
    ['30 days, UTC', { interval: 'day', ...window }],
    ['720 hours, America/New_York', { interval: 'hour', time_zone: 'America/New_York', ...window }],
  ];
  const rows: string[] = [];
  for (const [label, query] of shapes) {
    const answer = await client.experiments.timeline(experiment.id, query);
    const url = `${server.baseUrl}/api/v1/experiments/${experiment.id}/results/timeline?${new URLSearchParams(query as Record<string, string>).toString()}`;
    const counted = answer.buckets
      .flatMap((b) => b.variants)
      .reduce((sum, v) => sum + v.session_count, 0);
    if (counted !== sessionCount) throw new Error(`${label}: buckets hold ${counted} sessions`);
    await load({ url, connections, seconds: 2, maxRequests: 20, headers }); // warm-up
    // At most 400 requests: with a request count autocannon ignores the duration.
    const result = await load({ url, connections, seconds, maxRequests: 400, headers });
    rows.push(formatRow(`${label} (${answer.buckets.length} buckets)`, result));
  }
  console.log(
    `results timeline on ${database.url.startsWith('postgres') ? 'postgres' : 'sqlite'}: ${sessionCount} sessions over ${DAYS} days (stored in ${loadSeconds.toFixed(0)} s), ${connections} connections, ${seconds} s each, server RSS ${server.rssMiB().toFixed(0)} MiB`,
  );
  console.log(TABLE_HEADER);
  for (const row of rows) console.log(row);
} finally {
  await server.stop();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
