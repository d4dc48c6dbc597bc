// Where a day's CPU goes (day.ts): core-seconds by class of process over the day, and each part
// of the day run alone afterwards to cost it per operation.

import { setMaxListeners } from 'node:events';
import { availableParallelism } from 'node:os';
import { isPostgresUrl } from '../../apps/server/src/db/engine/client.js';
import { CLI_APPLICATION_NAME } from '../../apps/server/src/cli/context.js';
import { withAdmin } from '../../apps/server/test/support/test-database.js';
import {
  cpuAccount,
  type CpuAccount,
  lastReadSeconds,
  ownSeconds,
  postgresSeconds,
  processTreeSeconds,
} from './cpu-accounting.js';
import type { DayServers } from './day-servers.js';
import { sleep } from './harness.js';
import type { DayTenant } from './day-tenants.js';
import {
  newTallies,
  tenantDay,
  type DayPart,
  type DayPlan,
  type DayTallies,
} from './day-traffic.js';

/** How long each part of the day runs alone after it, to cost it. */
const COST_PHASE_SECONDS = 10;

export type DayCpu = 'servers' | 'haproxy' | 'pgbouncer' | 'database' | 'replica' | 'generator';

/**
 * The day's CPU by process class: the server processes with their threads (those a rolling
 * restart ended included), HAProxy and PgBouncer when they run, the PostgreSQL server's processes
 * (its replica's apart), and this load generator; the import is costed by itself (importMidway).
 * On SQLite the database runs inside the servers. PgBouncer and PostgreSQL serve whatever else
 * the machine runs on them too.
 */
export async function dayCpuAccount(
  servers: DayServers,
  databaseUrl: string,
  readUrl: string | undefined,
): Promise<CpuAccount<DayCpu>> {
  const treeOf = (pid: number | undefined) => () =>
    pid === undefined ? 0 : processTreeSeconds(pid);
  return cpuAccount<DayCpu>({
    servers: servers.serverSeconds,
    haproxy: treeOf(servers.haproxyPid),
    pgbouncer: treeOf(servers.pgbouncerPid),
    database: await postgresSeconds(isPostgresUrl(databaseUrl) ? databaseUrl : undefined),
    replica: await postgresSeconds(readUrl),
    generator: ownSeconds,
  });
}

/** What serves the day: everything but the load generator and the import. */
const SERVING = ['servers', 'haproxy', 'pgbouncer', 'database', 'replica'] as const;
const serverAndDb = (spent: Record<DayCpu, number>) =>
  SERVING.reduce((sum, name) => sum + spent[name], 0);
const listCount = (tallies: DayTallies) =>
  Object.values(tallies.lists).reduce((n, l) => n + l.latencies.count, 0);

/**
 * CPU seconds of the PostgreSQL backends that serve the operator CLI (CLI_APPLICATION_NAME) on
 * `databaseUrl`'s database until `ended` settles, read every 100 ms: an import's inserts, triggers
 * and index updates. None on SQLite, where they run in the import's own process. What a backend
 * spends after its last read stays the database's.
 */
export async function cliBackendSeconds(databaseUrl: string, ended: Promise<unknown>) {
  if (!isPostgresUrl(databaseUrl)) return 0;
  let done = false;
  void ended.finally(() => (done = true));
  return withAdmin(databaseUrl, async (client) => {
    let pids: number[] = [];
    const seconds = lastReadSeconds(() => pids);
    while (!done) {
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = $1`,
        [CLI_APPLICATION_NAME],
      );
      pids = rows.map(({ pid }) => pid);
      seconds();
      await sleep(100);
    }
    return seconds();
  });
}

/** What the day's import spent: its process, and on PostgreSQL the backends that served it. */
export interface ImportCpu {
  processSeconds: number;
  backendSeconds: number;
}

/**
 * Prints where the day's core-seconds went; returns the servers' and databases' per minute. The
 * import's backends count as the import, not the database: on SQLite the same work runs in the
 * import's process, which the servers' and databases' figure leaves out on both.
 */
export function cpuReport(
  counted: Record<DayCpu, number>,
  importCpu: ImportCpu,
  minutes: number,
  tallies: DayTallies,
): number {
  const spent = { ...counted, database: counted.database - importCpu.backendSeconds };
  const importSeconds = importCpu.processSeconds + importCpu.backendSeconds;
  const total = serverAndDb(spent);
  const lists = listCount(tallies);
  const perMs = (count: number) => ((total / Math.max(1, count)) * 1000).toFixed(2);
  console.log(
    `core-seconds over the day (${minutes} min, the machine has ${(availableParallelism() * minutes * 60).toFixed(0)}): ` +
      `servers ${spent.servers.toFixed(1)}, HAProxy ${spent.haproxy.toFixed(1)}, PgBouncer ${spent.pgbouncer.toFixed(1)}, database ${spent.database.toFixed(1)}, replica ${spent.replica.toFixed(1)}, ` +
      `import ${importSeconds.toFixed(1)} (its database backends ${importCpu.backendSeconds.toFixed(1)}), load generator ${spent.generator.toFixed(1)}; ` +
      `server+db ${total.toFixed(1)} (${(total / minutes).toFixed(1)} per minute): ` +
      `${perMs(tallies.routing.latencies.count)} core-ms per routed session, ${perMs(lists)} per list, ` +
      `${perMs(tallies.delivery.count + tallies.streamedOthers)} per streamed event, were each the whole`,
  );
  return total / minutes;
}

/**
 * Each part of the day alone for COST_PHASE_SECONDS at the day's rate, and the servers' and
 * databases' core-ms per operation in it: routing, lists, and routing with the live streams open,
 * whose excess over routing alone is the streams' cost per event they delivered.
 */
export async function costPhases(
  tenants: readonly DayTenant[],
  dayPlan: DayPlan,
  cpu: CpuAccount<DayCpu>,
): Promise<void> {
  const phase = async (parts: DayPart[]) => {
    const streams = new AbortController();
    setMaxListeners(0, streams.signal);
    const started = performance.now();
    const plan: DayPlan = {
      ...dayPlan,
      parts: new Set(parts),
      untilMs: started + COST_PHASE_SECONDS * 1000,
      streamSignal: streams.signal,
    };
    const tallies = newTallies(started);
    cpu.take();
    const days = Promise.all(tenants.map((tenant) => tenantDay(tenant, plan, tallies)));
    // The streams stay open a moment past the last routing, to receive its events.
    await sleep(plan.untilMs - performance.now() + 1_000);
    streams.abort();
    await days;
    const spent = cpu.take();
    return { tallies, spent, coreSeconds: serverAndDb(spent) };
  };
  const routing = await phase(['routing']);
  const lists = await phase(['lists']);
  const streamed = await phase(['routing', 'streams']);
  const perSession = routing.coreSeconds / routing.tallies.routing.latencies.count;
  const listed = listCount(lists.tallies);
  if (routing.tallies.routing.latencies.count === 0 || listed === 0) {
    console.log(
      `core-ms per operation not measured: no routed session or no list ended within its ${COST_PHASE_SECONDS} s alone (the servers were still behind the day)`,
    );
    return;
  }
  const events = streamed.tallies.delivery.count + streamed.tallies.streamedOthers;
  const streamsAlone = streamed.coreSeconds - perSession * streamed.tallies.routing.latencies.count;
  const split = ({ spent }: { spent: Record<DayCpu, number> }, count: number) =>
    SERVING.map((name) => `${name} ${((spent[name] / count) * 1000).toFixed(2)}`).join(', ');
  const sessions = routing.tallies.routing.latencies.count;
  console.log(
    `core-ms of the servers, their proxies and databases per operation, each part alone for ${COST_PHASE_SECONDS} s: ` +
      `routed session ${(perSession * 1000).toFixed(2)} (${split(routing, sessions)}; ${sessions} sessions), ` +
      `list ${((lists.coreSeconds / listed) * 1000).toFixed(2)} (${split(lists, listed)}; ${listed} lists), ` +
      `streamed event ${((streamsAlone / Math.max(1, events)) * 1000).toFixed(3)} (${events} events on ${tenants.length * 2} streams, beside routing)`,
  );
}
