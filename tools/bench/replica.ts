// A read replica's share of the list traffic: `pnpm bench:replica --database postgres://...
// --read-database postgres://... [--events 1000000] [--seconds 30] [--connections 16]
// [--routing-rate 50]`. `--read-database` is a streaming replica of `--database`'s server
// (scripts/postgres-replica-setup.sh makes one). Writes `--events` events into one organization
// (bench-events.ts), then runs the real server twice, without and with DATABASE_READ_URL: each
// time a dashboard key asks varied list queries through the SDK on `--connections` connections as
// fast as they are answered (day-queries.ts: different searches, windows, orders and pages, so few
// are kept answers), while a router key routes sessions through the SDK at `--routing-rate` a
// second on a schedule (open loop). Prints each run's list throughput and p50/p99, routing
// p50/p99, and the transactions each database server committed for the benchmark's database.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { withAdmin } from '../../apps/server/test/support/test-database.js';
import { createClient } from '../../packages/sdk/src/index.js';
import { createBenchDatabase } from './bench-database.js';
import { buildEvents } from './bench-events.js';
import { benchKey, benchRoutingTenant, randomCaller } from './bench-tenant.js';
import { listWithSdk, randomListQuery } from './day-queries.js';
import { Latencies, openLoop, poissonGapsMs } from './open-loop.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    'read-database': { type: 'string' },
    events: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '16' },
    'routing-rate': { type: 'string', default: '50' },
  },
});
if (!values.database || !values['read-database']) {
  console.error(
    'bench:replica needs --database postgres://... and --read-database postgres://... (a streaming replica of it; scripts/postgres-replica-setup.sh makes one)',
  );
  process.exit(2);
}
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const routingRate = Number(values['routing-rate']);

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-replica-'));
const database = await createBenchDatabase(directory, values.database, 'replica');
/** The benchmark's database on the replica: the same name on the replica's server. */
const readUrl = (() => {
  const url = new URL(database.url);
  url.host = new URL(values['read-database']).host;
  return url.toString();
})();
const setup = createDb(database.url);
await migrateDb(setup);
const tenant = await benchRoutingTenant(setup, 'Bench');
const dashboardKey = await benchKey(setup, tenant.organizationId);
await buildEvents(setup, [tenant.organizationId], Number(values.events));
await setup.close();

/** Transactions committed in the benchmark's database on the server of `url` so far. */
function commits(url: string): Promise<number> {
  return withAdmin(url, async (client) => {
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]!.n);
  });
}

/** Waits until the replica has replayed all the primary wrote so far (the events just built). */
async function replicaCaughtUp(): Promise<void> {
  const target = await withAdmin(database.url, async (primary) => {
    const { rows } = await primary.query<{ lsn: string }>(
      'SELECT pg_current_wal_insert_lsn()::text AS lsn',
    );
    return rows[0]!.lsn;
  });
  for (;;) {
    const reached = await withAdmin(readUrl, async (replica) => {
      const { rows } = await replica.query<{ done: boolean }>(
        'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
        [target],
      );
      return rows[0]!.done;
    }).catch(() => false);
    if (reached) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
await replicaCaughtUp();

interface Run {
  label: string;
  lists: Latencies;
  listErrors: number;
  routing: Latencies;
  routingErrors: number;
  primaryCommits: number;
  replicaCommits: number;
}

async function run(label: string, env: Record<string, string>): Promise<Run> {
  await database.settle();
  const server = await startServerProcess(
    { DATABASE_URL: database.url, ...env },
    { keepOutput: false },
  );
  const dashboard = createClient({ apiKey: dashboardKey, baseUrl: server.baseUrl });
  const router = createClient({ apiKey: tenant.key, baseUrl: server.baseUrl });
  const result: Run = {
    label,
    lists: new Latencies(),
    listErrors: 0,
    routing: new Latencies(),
    routingErrors: 0,
    primaryCommits: 0,
    replicaCommits: 0,
  };
  const before = [await commits(database.url), await commits(readUrl)];
  const until = performance.now() + seconds * 1000;
  const signal = AbortSignal.timeout(seconds * 1000 + 30_000);
  const listing = Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      try {
        await listWithSdk(dashboard, randomListQuery(tenant.organizationId), signal);
        result.lists.add(performance.now() - started);
      } catch {
        result.listErrors += 1;
      }
    }
  });
  const routing = openLoop({
    untilMs: until,
    firstGapMs: 0,
    gapMs: poissonGapsMs(routingRate),
    maxInFlight: 32,
    work: async (dueAt) => {
      try {
        await router.sessions.route(tenant.targetId, {
          user_id: randomCaller(),
        });
        result.routing.add(performance.now() - dueAt);
      } catch {
        result.routingErrors += 1;
      }
    },
  });
  await Promise.all([...listing, routing]);
  const after = [await commits(database.url), await commits(readUrl)];
  result.primaryCommits = after[0]! - before[0]!;
  result.replicaCommits = after[1]! - before[1]!;
  await server.stop();
  return result;
}

try {
  const runs = [
    await run('primary alone', {}),
    await run('with the replica', { DATABASE_READ_URL: readUrl }),
  ];
  console.log(
    `\nvaried lists on ${connections} connections for ${seconds} s beside routing at ${routingRate}/s, ${values.events} events`,
  );
  console.log(
    '| run | lists/s | list p50 / p99 ms | list errors | routing p50 / p99 ms | routing errors | commits on primary / replica |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of runs) {
    console.log(
      `| ${r.label} | ${(r.lists.count / seconds).toFixed(0)} | ${r.lists.percentile(50).toFixed(1)} / ${r.lists.percentile(99).toFixed(1)} | ${r.listErrors} | ${r.routing.percentile(50).toFixed(1)} / ${r.routing.percentile(99).toFixed(1)} | ${r.routingErrors} | ${r.primaryCommits} / ${r.replicaCommits} |`,
    );
  }
  const [alone, replicated] = runs as [Run, Run];
  console.log(
    `replica: lists ${(alone.lists.count / seconds).toFixed(0)}/s -> ${(replicated.lists.count / seconds).toFixed(0)}/s (x${(replicated.lists.count / alone.lists.count).toFixed(2)}), routing p99 ${alone.routing.percentile(99).toFixed(1)} -> ${replicated.routing.percentile(99).toFixed(1)} ms`,
  );
} finally {
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
