// Where a day's CPU goes (day.ts): core-seconds by class of process over the day, and each part
// of the day run alone afterwards to cost it per operation.

import { setMaxListeners } from 'node:events';
import { availableParallelism } from 'node:os';
import { isPostgresUrl } from '../../apps/server/src/db/engine/client.js';
import { CpuAccount, ownSeconds, postmasterPid, processTreeSeconds } from './cpu-accounting.js';
import type { DayServers } from './day-servers.js';
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

const sleep = (milliseconds: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, milliseconds)));

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
  const primary = isPostgresUrl(databaseUrl) ? await postmasterPid(databaseUrl) : undefined;
  const replica = readUrl === undefined ? undefined : await postmasterPid(readUrl);
  const treeOf = (pid: number | undefined) => () =>
    pid === undefined ? 0 : processTreeSeconds(pid);
  return new CpuAccount<DayCpu>({
    servers: servers.serverSeconds,
    haproxy: treeOf(servers.haproxyPid),
    pgbouncer: treeOf(servers.pgbouncerPid),
    database: treeOf(primary),
    replica: treeOf(replica),
    generator: ownSeconds,
  });
}

/** What serving the day cost: everything but the load generator and the import. */
function serverAndDb(spent: Record<DayCpu, number>): number {
  return spent.servers + spent.haproxy + spent.pgbouncer + spent.database + spent.replica;
}

/** Prints where the day's core-seconds went; returns the servers' and databases' per minute. */
export function cpuReport(
  spent: Record<DayCpu, number>,
  importSeconds: number,
  minutes: number,
  tallies: DayTallies,
): number {
  const total = serverAndDb(spent);
  const lists = Object.values(tallies.lists).reduce((n, l) => n + l.latencies.count, 0);
  const perMs = (count: number) => ((total / Math.max(1, count)) * 1000).toFixed(2);
  console.log(
    `core-seconds over the day (${minutes} min, the machine has ${(availableParallelism() * minutes * 60).toFixed(0)}): ` +
      `servers ${spent.servers.toFixed(1)}, HAProxy ${spent.haproxy.toFixed(1)}, PgBouncer ${spent.pgbouncer.toFixed(1)}, database ${spent.database.toFixed(1)}, replica ${spent.replica.toFixed(1)}, ` +
      `import ${importSeconds.toFixed(1)}, load generator ${spent.generator.toFixed(1)}; ` +
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
  const listCount = Object.values(lists.tallies.lists).reduce((n, l) => n + l.latencies.count, 0);
  const events = streamed.tallies.delivery.count + streamed.tallies.streamedOthers;
  const streamsAlone = streamed.coreSeconds - perSession * streamed.tallies.routing.latencies.count;
  const split = ({ spent }: { spent: Record<DayCpu, number> }, count: number) =>
    (['servers', 'haproxy', 'pgbouncer', 'database', 'replica'] as const)
      .map((name) => `${name} ${((spent[name] / count) * 1000).toFixed(2)}`)
      .join(', ');
  const sessions = routing.tallies.routing.latencies.count;
  console.log(
    `core-ms of the servers, their proxies and databases per operation, each part alone for ${COST_PHASE_SECONDS} s: ` +
      `routed session ${(perSession * 1000).toFixed(2)} (${split(routing, sessions)}; ${sessions} sessions), ` +
      `list ${((lists.coreSeconds / listCount) * 1000).toFixed(2)} (${split(lists, listCount)}; ${listCount} lists), ` +
      `streamed event ${((streamsAlone / Math.max(1, events)) * 1000).toFixed(3)} (${events} events on ${tenants.length * 2} streams, beside routing)`,
  );
}
