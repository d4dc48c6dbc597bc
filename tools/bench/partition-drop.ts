// Retention dropping a month whole on PostgreSQL (db/repositories/event-partitions.ts):
// `pnpm bench:partition-drop --database postgres://... [--events 1000000] [--rate 50]
// [--seconds 20]`. An organization holds --events events in one month of their own partition (a
// month far ahead, made for the benchmark, so that the clock can be moved past its window without
// waiting for it) and another organization routes sessions through the SDK at --rate a second
// (open loop) against a real server. After a 5 s warm-up and --seconds of routing, this process
// runs the retention sweep as the month past the first organization's 30-day window, and routing
// goes on for --seconds more. Prints the sweep's time and what it removed, and routing's p50/p99
// in the seconds before and in the seconds from the sweep's start. Bounded: fixed phases,
// 127.0.0.1 only. Last line: `partition drop: removed N in X ms, routing p99 A -> B ms (ratio R)`.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb, type PostgresDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { ensureEventPartitions } from '../../apps/server/src/db/repositories/event-partitions.js';
import { setOrganizationRetention } from '../../apps/server/src/db/repositories/event-retention.js';
import { sweepExpiredEvents } from '../../apps/server/src/use-cases/event-retention.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { createClient } from '../../packages/sdk/src/index.js';
import { createBenchDatabase } from './bench-database.js';
import { buildSpreadEvents } from './bench-events.js';
import { benchRoutingTenant, benchTenant, randomCaller } from './bench-tenant.js';
import { Latencies, openLoop, poissonGapsMs } from './open-loop.js';

const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    events: { type: 'string', default: '1000000' },
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '20' },
  },
});
if (!values.database) {
  console.error(
    'bench:partition-drop needs --database postgres://... (time partitions are PostgreSQL only)',
  );
  process.exit(2);
}
const eventCount = Number(values.events);
const rate = Number(values.rate);
const phaseMs = Number(values.seconds) * 1000;
/** The month the events are in, and a moment 30 days after its end plus one. */
const MONTH = '2090-01';
const SWEEP_NOW = Date.parse('2090-03-05T00:00:00.000Z');
/** Routing before the first phase counts, so that both phases are measured warm. */
const WARM_UP_MS = 5_000;

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-partition-drop-'));
const database = await createBenchDatabase(directory, values.database, 'partition_drop');
const db = createDb(database.url) as PostgresDb;
try {
  await migrateDb(db);
  const router = await benchRoutingTenant(db, 'Router');
  const expiring = await benchTenant(db, 'Expiring');
  await setOrganizationRetention(db, router.organizationId, 0);
  await setOrganizationRetention(db, expiring.organizationId, 30);
  await ensureEventPartitions(db, Date.parse(`${MONTH}-15T00:00:00.000Z`));

  const built = performance.now();
  await buildSpreadEvents(db, expiring.organizationId, {
    count: eventCount,
    seed: 13,
    startMs: Date.parse(`${MONTH}-01T00:00:00.000Z`),
    spanMs: 31 * 86_400_000,
    keyPrefix: 'month',
  });
  await db.pool.query('VACUUM (ANALYZE) events');
  console.log(
    `built ${eventCount} events in ${MONTH} in ${((performance.now() - built) / 1000).toFixed(1)} s`,
  );

  const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
  const client = createClient({ apiKey: router.key, baseUrl: server.baseUrl });
  const before = new Latencies();
  const beside = new Latencies();
  let sweepStartedAt = Number.POSITIVE_INFINITY;
  let failures = 0;
  const started = performance.now();
  const routing = openLoop({
    untilMs: started + WARM_UP_MS + 2 * phaseMs,
    firstGapMs: 0,
    gapMs: poissonGapsMs(rate),
    maxInFlight: 32,
    work: async (dueAt) => {
      const userId = randomCaller();
      try {
        await client.sessions.route(router.targetId, { user_id: userId });
        if (dueAt < started + WARM_UP_MS) return;
        (dueAt < sweepStartedAt ? before : beside).add(performance.now() - dueAt);
      } catch {
        failures += 1;
      }
    },
  });
  await new Promise((resolve) => setTimeout(resolve, WARM_UP_MS + phaseMs));
  sweepStartedAt = performance.now();
  const removed = await sweepExpiredEvents(db, { defaultDays: 0, now: SWEEP_NOW });
  const sweepMs = performance.now() - sweepStartedAt;
  await routing;
  await server.stop();

  const p99 = [before.percentile(99), beside.percentile(99)] as const;
  console.log(`sweep: removed ${removed} events in ${sweepMs.toFixed(1)} ms`);
  console.log(
    `routing at ${rate}/s: before p50/p99 ${before.percentile(50).toFixed(1)}/${p99[0].toFixed(1)} ms (${before.count}), from the sweep on ${beside.percentile(50).toFixed(1)}/${p99[1].toFixed(1)} ms (${beside.count}), ${failures} failed`,
  );
  console.log(
    `partition drop: removed ${removed} in ${sweepMs.toFixed(0)} ms, routing p99 ${p99[0].toFixed(1)} -> ${p99[1].toFixed(1)} ms (ratio ${(p99[1] / p99[0]).toFixed(2)})`,
  );
} finally {
  await db.close();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
