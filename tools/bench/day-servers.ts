// The server processes of the day benchmark (day.ts): two on one database, each client sending
// to them in turn; or, with `fleet`, three behind HAProxy as deploy/haproxy.cfg deploys them
// (test/support/fleet.ts), every client sending to HAProxy. With a pooler, their PostgreSQL
// connections go through it (PgBouncer in transaction mode) without prepared statements by name.

import { startFleet, type Fleet } from '../../apps/server/test/support/fleet.js';
import {
  startServerProcess,
  type ServerProcess,
} from '../../apps/server/test/support/server-process.js';
import { postgresUrlOf } from '../../apps/server/test/support/test-database.js';
import { lastReadSeconds, listenerPid } from './cpu-accounting.js';

/**
 * The day's server processes on `databaseUrl` (PostgreSQL or SQLite), connecting through
 * `poolerUrl` (in front of the database's PostgreSQL server) when given.
 */
export async function startDayServers(options: {
  databaseUrl: string;
  poolerUrl: string | undefined;
  readUrl: string | undefined;
  serverEnv: Record<string, string>;
  fleet: boolean;
}) {
  const { databaseUrl, poolerUrl, readUrl, serverEnv } = options;
  const pooled = poolerUrl && {
    DATABASE_URL: postgresUrlOf(poolerUrl, new URL(databaseUrl).pathname.slice(1)),
    DATABASE_PREPARED_STATEMENTS: 'false',
  };
  const env = {
    DATABASE_URL: databaseUrl,
    ...pooled,
    ...(readUrl && { DATABASE_READ_URL: readUrl }),
    ...serverEnv,
  };
  // The access log's lines are drained unread: splitting them would take the load generator's time.
  const serverOptions = { keepOutput: false };
  const pgbouncerPid = poolerUrl ? listenerPid(Number(new URL(poolerUrl).port || 5432)) : undefined;
  const hops = poolerUrl ? ', through PgBouncer' : '';
  let fleet: Fleet | undefined;
  let processes: () => readonly ServerProcess[];
  if (options.fleet) {
    fleet = await startFleet(env, { processes: 3, serverOptions });
    processes = () => fleet!.servers;
  } else {
    const servers: ServerProcess[] = [];
    for (let i = 0; i < 2; i += 1) servers.push(await startServerProcess(env, serverOptions));
    processes = () => servers;
  }
  return {
    /** Where the clients send their requests: HAProxy, or every server process in turn. */
    entries: fleet ? [fleet.baseUrl] : processes().map((server) => server.baseUrl),
    /** The server processes now: a rolling restart replaces each one. */
    processes,
    /** What runs, for the day's first line. */
    description: fleet
      ? `3 server processes behind HAProxy${hops}`
      : `2 server processes${hops}, each client sending to them in turn`,
    /** The CPU seconds of every server process the day had, those a restart ended included. */
    serverSeconds: lastReadSeconds(() => processes().map((server) => server.child.pid!)),
    haproxyPid: fleet?.haproxyPid,
    pgbouncerPid,
    /** The fleet, whose processes a rolling restart can take turns to stop; none without it. */
    fleet,
    stop: async () => {
      if (fleet) await fleet.stop();
      else await Promise.all(processes().map((server) => server.stop()));
    },
  };
}

export type DayServers = Awaited<ReturnType<typeof startDayServers>>;

/**
 * How often HAProxy took a process out of the fleet over the day, by the reason its health
 * checks gave (a process stopping refuses connections; one too busy to answer /healthz within
 * the check's 1 s times out), and how often it had none left; nothing without a fleet.
 */
export function haproxyReport(servers: DayServers): string | undefined {
  if (!servers.fleet) return undefined;
  const log = servers.fleet.haproxyLog();
  const reasons = new Map<string, number>();
  for (const [, reason] of log.matchAll(/ is DOWN, reason: ([^,]+),/g)) {
    reasons.set(reason!, (reasons.get(reason!) ?? 0) + 1);
  }
  const none = log.match(/has no server available/g)?.length ?? 0;
  const downs = [...reasons.values()].reduce((sum, n) => sum + n, 0);
  return `HAProxy took a process out ${downs} times${downs > 0 ? ` (${[...reasons].map(([reason, n]) => `${reason}: ${n}`).join(', ')})` : ''}, and had none left ${none} times`;
}

/** How often the restart reads the servers' CPU time, to lose little of a stopping process's. */
const CPU_READ_EVERY_MS = 100;
/** How long a drained process's connections are waited for: the day's streams never end. */
const DRAIN_MS = 2_000;

/**
 * The fleet's rolling restart (Fleet.rollingRestart) `afterMs` from now: one process at a time
 * drained, SIGTERM, started again, up in HAProxy's health checks. Resolves with a line saying
 * when it ran and how each process exited.
 */
export async function rollingRestartAfter(servers: DayServers, afterMs: number): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  const started = performance.now();
  const reading = setInterval(servers.serverSeconds, CPU_READ_EVERY_MS);
  try {
    const exitCodes = await servers.fleet!.rollingRestart(DRAIN_MS);
    return `rolling restart at ${(afterMs / 1000).toFixed(0)} s: ${exitCodes.length} processes one at a time in ${((performance.now() - started) / 1000).toFixed(1)} s (each drained up to ${DRAIN_MS / 1000} s, then SIGTERM), exit codes ${exitCodes.join(', ')}`;
  } finally {
    clearInterval(reading);
  }
}
