// Event retention under load: `pnpm bench:retention [--database postgres://...] [--events 1000000]
// [--rate 50] [--baseline-seconds 30] [--disk-minutes 10] [--write-rate 1000]`.
//
// 1. The sweep beside routing: an organization holds --events events of one day, three days ago,
//    and a server with EVENT_RETENTION_DAYS=2 routes its sessions through the SDK at --rate a
//    second (open loop, arrivals on a schedule). After a warm-up and --baseline-seconds, the
//    organization's own window (0: keep all) goes back to the server's, and the server's next
//    minutely sweep removes that day while routing goes on. Prints the sweep's time and routing's
//    p50/p99 before and during it (the wait for the sweep counts as before).
// 2. Disk bounded, on a new database: a server with EVENT_RETENTION_DAYS=1 for --disk-minutes
//    while a writer process writes --write-rate events a second with timestamps spread from three
//    days to one day less five minutes before their write: nearly all are past the window already,
//    and the rest pass it within five minutes, so what is kept stops growing after five minutes
//    while a day's worth is written every minute and a half. Prints the database's size and its
//    event count each minute, and the largest size of each half. --events 0 skips step 1.
// Last line: `retention: removed N in X s, routing p99 A -> B ms (ratio R), disk max M1 -> M2 MB`.
// Bounded: fixed phases, 127.0.0.1 only.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDb, type Db } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { setOrganizationRetention } from '../../apps/server/src/db/repositories/event-retention.js';
import {
  startServerProcess,
  type ServerProcess,
} from '../../apps/server/test/support/server-process.js';
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
    'baseline-seconds': { type: 'string', default: '30' },
    'disk-minutes': { type: 'string', default: '10' },
    'write-rate': { type: 'string', default: '1000' },
  },
});
const eventCount = Number(values.events);
const rate = Number(values.rate);
const baselineSeconds = Number(values['baseline-seconds']);
const diskMinutes = Number(values['disk-minutes']);
const DAY_MS = 86_400_000;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Routing arrivals in progress at most, as a front door with a bounded pool. */
const ROUTING_IN_FLIGHT = 32;
/** Routing before the baseline counts, so that both phases are measured warm. */
const WARM_UP_MS = 5_000;

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-retention-'));
const database = await createBenchDatabase(directory, values.database, 'retention');
const db = createDb(database.url);
await migrateDb(db);
const tenant = await benchRoutingTenant(db, 'Retention');

/** One day of events, three days ago, through the import's own batch insert. */
async function buildExpiringDay(target: Db): Promise<void> {
  const started = performance.now();
  await buildSpreadEvents(target, tenant.organizationId, {
    count: eventCount,
    seed: 11,
    startMs: Date.now() - 3 * DAY_MS,
    spanMs: DAY_MS,
    keyPrefix: 'retention',
  });
  if (target.kind === 'postgres') await target.pool.query('VACUUM (ANALYZE) events');
  console.log(
    `built ${eventCount} events of one day on ${target.kind} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

/** A one-number query about the organization (`$1` is its id), on `target` (default: step 1's). */
async function organizationFigure(text: string, target: Db = db): Promise<number> {
  if (target.kind === 'sqlite') {
    return Number(
      target.sqlite.prepare(text.replace('$1', '?')).pluck().get(tenant.organizationId),
    );
  }
  const { rows } = await target.pool.query<{ n: string }>(text, [tenant.organizationId]);
  return Number(Object.values(rows[0]!)[0]);
}

const removedSoFar = () =>
  organizationFigure('SELECT events_removed FROM organizations WHERE id = $1');

/**
 * Routes sessions through the SDK at `rate` a second until `done()`, each latency added to what
 * `phase()` names when its session was due.
 */
async function routeUntil(
  server: ServerProcess,
  done: () => boolean,
  phase: () => Latencies | null,
): Promise<void> {
  const client = createClient({ apiKey: tenant.key, baseUrl: server.baseUrl });
  const gaps = poissonGapsMs(rate);
  let failures = 0;
  const deadline = performance.now() + 3_600_000;
  await openLoop({
    untilMs: deadline,
    firstGapMs: gaps(),
    gapMs: () => (done() ? deadline : gaps()),
    maxInFlight: ROUTING_IN_FLIGHT,
    work: async (dueAt) => {
      const latencies = phase();
      const userId = randomCaller();
      try {
        await client.sessions.route(tenant.targetId, { user_id: userId });
        latencies?.add(performance.now() - dueAt);
      } catch {
        failures += 1;
      }
    },
  });
  if (failures > 0) console.log(`  ${failures} routing calls failed`);
}

const formatMs = (ms: number) => ms.toFixed(1);

/**
 * One server process throughout, so both phases are measured warm: the organization keeps its
 * events (its own window 0) while the baseline is measured, then follows the server's 2 days,
 * and the server's next minutely sweep removes the day.
 */
async function sweepBesideRouting() {
  await buildExpiringDay(db);
  await setOrganizationRetention(db, tenant.organizationId, 0);
  const server = await startServerProcess(
    { DATABASE_URL: database.url, EVENT_RETENTION_DAYS: '2' },
    { keepOutput: false },
  );
  const baseline = new Latencies();
  const during = new Latencies();
  const warmEnd = performance.now() + WARM_UP_MS;
  const baselineEnd = warmEnd + baselineSeconds * 1000;
  let released = false;
  let removed = 0;
  let sweepStart = Number.NaN;
  let sweepEnd = Number.NaN;
  const watch = setInterval(() => {
    if (!released && performance.now() >= baselineEnd) {
      released = true;
      void setOrganizationRetention(db, tenant.organizationId, null);
    }
    void removedSoFar().then((count) => {
      removed = count;
      if (count > 0 && Number.isNaN(sweepStart)) sweepStart = performance.now();
      if (count >= eventCount && Number.isNaN(sweepEnd)) sweepEnd = performance.now();
    });
  }, 100);
  await routeUntil(
    server,
    () => !Number.isNaN(sweepEnd),
    () => {
      const now = performance.now();
      if (now < warmEnd) return null;
      return Number.isNaN(sweepStart) ? baseline : during;
    },
  );
  clearInterval(watch);
  await server.stop();
  const sweepSeconds = (sweepEnd - sweepStart) / 1000;
  const [baseP99, duringP99] = [baseline.percentile(99), during.percentile(99)];
  console.log(
    `sweep of ${removed} events beside routing at ${rate}/s: ${sweepSeconds.toFixed(1)} s (${Math.round(removed / sweepSeconds)} events/s)`,
  );
  console.log(
    `routing p50/p99: ${formatMs(baseline.percentile(50))}/${formatMs(baseP99)} ms before (${baseline.count} sessions), ${formatMs(during.percentile(50))}/${formatMs(duringP99)} ms during the sweep (${during.count}); p99 ratio ${(duringP99 / baseP99).toFixed(2)}`,
  );
  return { removed, sweepSeconds, baseP99, duringP99 };
}

/** How much younger than the window the youngest written event is: it passes it that much later. */
const YOUNGEST_MARGIN_DAYS = 5 / 1440;

/** The writer process: `perSecond` events a second for `seconds`, ages as described above. */
function writeEvents(databaseUrl: string, seconds: number): Promise<void> {
  const writer = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'tools/bench/event-writer.ts',
      databaseUrl,
      String(tenant.organizationId),
      values['write-rate'],
      String(seconds),
      '3',
      String(1 - YOUNGEST_MARGIN_DAYS),
    ],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return new Promise((resolve, reject) =>
    writer.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`the writer exited ${code}`)),
    ),
  );
}

async function diskBounded() {
  const diskDirectory = join(directory, 'disk');
  mkdirSync(diskDirectory);
  const disk = await createBenchDatabase(diskDirectory, values.database, 'retention_disk');
  const diskDb = createDb(disk.url);
  await migrateDb(diskDb);
  // The same organization id as step 1's, the first of the new database.
  const { organizationId } = await benchTenant(diskDb, 'Retention disk');
  if (organizationId !== tenant.organizationId) throw new Error('unexpected organization id');
  const server = await startServerProcess(
    { DATABASE_URL: disk.url, EVENT_RETENTION_DAYS: '1' },
    { keepOutput: false },
  );
  const sizes: number[] = [];
  const writing = writeEvents(disk.url, diskMinutes * 60);
  for (let minute = 1; minute <= diskMinutes; minute += 1) {
    await new Promise((resolve) => setTimeout(resolve, 60_000));
    const bytes = await disk.sizeBytes();
    sizes.push(bytes);
    const held = await organizationFigure(
      'SELECT count(*) FROM events WHERE organization_id = $1',
      diskDb,
    );
    const removed = await organizationFigure(
      'SELECT events_removed FROM organizations WHERE id = $1',
      diskDb,
    );
    console.log(
      `minute ${minute}: database ${(bytes / 1e6).toFixed(1)} MB, ${held} events held, ${removed} removed, server RSS ${Math.round(server.rssMiB())} MiB`,
    );
  }
  await writing;
  await server.stop();
  await diskDb.close();
  await disk.drop();
  const half = Math.ceil(sizes.length / 2);
  const maxMb = (part: number[]) => Math.max(...part) / 1e6;
  return { firstHalf: maxMb(sizes.slice(0, half)), lastHalf: maxMb(sizes.slice(half)) };
}

try {
  const sweep = eventCount > 0 ? await sweepBesideRouting() : null;
  const disk = diskMinutes > 0 ? await diskBounded() : null;
  if (disk) {
    console.log(
      `disk over ${diskMinutes} min at ${values['write-rate']} events/s with a 1-day window: largest ${disk.firstHalf.toFixed(1)} MB in the first half, ${disk.lastHalf.toFixed(1)} MB in the second`,
    );
  }
  const swept = sweep
    ? `removed ${sweep.removed} in ${sweep.sweepSeconds.toFixed(1)} s, routing p99 ${formatMs(sweep.baseP99)} -> ${formatMs(sweep.duringP99)} ms (ratio ${(sweep.duringP99 / sweep.baseP99).toFixed(2)})`
    : 'sweep not measured';
  console.log(
    `retention: ${swept}, disk max ${disk ? `${disk.firstHalf.toFixed(1)} -> ${disk.lastHalf.toFixed(1)} MB` : 'not measured'}`,
  );
} finally {
  await db.close();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
