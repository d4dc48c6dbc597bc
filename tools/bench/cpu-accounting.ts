// Core-seconds spent by the processes of a benchmark, read from /proc: a server process with its
// threads (or the threads it started late), a PostgreSQL cluster (its postmaster and every
// backend it started, ended ones included) or the backends of one application name, a child
// process that has ended, and the benchmark's own process. Unlike request rates, these do not
// depend on how busy the load generator was.

import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { withAdmin } from '../../apps/server/test/support/test-database.js';

const TICKS_PER_SECOND =
  Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

interface ProcStat {
  ppid: number;
  /** When it started, in clock ticks since the machine booted. */
  startTicks: number;
  /** User + system time of the process and all its threads. */
  ownTicks: number;
  /** User + system time of its children that have ended and been waited for. */
  endedChildrenTicks: number;
}

/** The stat of a process (`pid`), or of one thread of it (`pid/task/tid`). */
function procStat(pid: number | 'self' | `${number}/task/${string}`): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // ended between the listing and the read
  }
  // The fields after the command name, which may itself hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(') ') + 2).split(' ');
  return {
    ppid: Number(fields[1]),
    startTicks: Number(fields[19]),
    ownTicks: Number(fields[11]) + Number(fields[12]),
    endedChildrenTicks: Number(fields[13]) + Number(fields[14]),
  };
}

/**
 * CPU seconds of a process and of all its descendants, the living and those it has waited for:
 * a PostgreSQL postmaster's backends, say, whose time moves into the postmaster's account as
 * each connection closes.
 */
export function processTreeSeconds(root: number): number {
  const childrenOf = new Map<number, number[]>();
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat) continue;
    stats.set(Number(entry), stat);
    childrenOf.set(stat.ppid, [...(childrenOf.get(stat.ppid) ?? []), Number(entry)]);
  }
  let ticks = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    const stat = stats.get(pid);
    if (!stat) continue;
    ticks += stat.ownTicks + stat.endedChildrenTicks;
    pending.push(...(childrenOf.get(pid) ?? []));
  }
  return ticks / TICKS_PER_SECOND;
}

/**
 * CPU seconds of processes that come and go (server processes a rolling restart replaces): each
 * read adds the living ones' seconds to what the ended ones had at their last read. A process
 * read often enough while it stops loses little of its own; a reaped child's /proc is gone.
 */
export function lastReadSeconds(pids: () => readonly number[]): () => number {
  const last = new Map<number, number>();
  return () => {
    // The larger of the two: a process that ends between the listing and the read reads 0.
    for (const pid of pids()) last.set(pid, Math.max(last.get(pid) ?? 0, processTreeSeconds(pid)));
    return [...last.values()].reduce((sum, seconds) => sum + seconds, 0);
  };
}

/** Clock ticks since the machine booted: the clock of a process's or thread's start in /proc. */
export function ticksSinceBoot(): number {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * TICKS_PER_SECOND;
}

/**
 * CPU seconds of the threads of process `pid` that started at `sinceTicks` (ticksSinceBoot) or
 * later: a thread the process starts on demand, as a server starts its webhook thread once an
 * endpoint exists. Each read keeps every such thread's last seconds, so one that ended counts.
 */
export function threadsStartedSince(pid: number, sinceTicks: number): () => number {
  const last = new Map<string, number>();
  return () => {
    let threads: string[] = [];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      // The process has ended: its threads keep what they had at their last read.
    }
    for (const tid of threads) {
      const stat = procStat(`${pid}/task/${tid}`);
      if (stat && stat.startTicks >= sinceTicks) last.set(tid, stat.ownTicks / TICKS_PER_SECOND);
    }
    return [...last.values()].reduce((sum, seconds) => sum + seconds, 0);
  };
}

/**
 * CPU seconds of the backends of the PostgreSQL database at `url` (on this machine) whose
 * connections carry one of `applicationNames` (`application_name`): `sample()` finds them and reads each one's seconds, which `seconds()` sums with what the ended
 * ones had at their last sample (sample often enough that a connection a pool closes is read
 * shortly before). One connection of its own, kept until `close()`: a new one for each sample
 * would cost the database more than a sample reads.
 */
export async function namedBackendSeconds(url: string, applicationNames: readonly string[]) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let client: Parameters<Parameters<typeof withAdmin>[1]>[0] | undefined;
  let ended: Promise<void> | undefined;
  await new Promise<void>((opened, failed) => {
    ended = withAdmin(url, async (admin) => {
      client = admin;
      opened();
      await released;
    }).catch(failed);
  });
  const last = new Map<number, number>();
  return {
    async sample(): Promise<void> {
      const { rows } = await client!.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = ANY($1)`,
        [applicationNames],
      );
      for (const { pid } of rows) {
        const stat = procStat(pid);
        if (stat) last.set(pid, stat.ownTicks / TICKS_PER_SECOND);
      }
    },
    seconds: () => [...last.values()].reduce((sum, seconds) => sum + seconds, 0),
    async close(): Promise<void> {
      release();
      await ended;
    },
  };
}

/**
 * The pid of the process listening on TCP `port` of this machine (PgBouncer, which runs as a
 * daemon of its own), as `ss` (iproute2) reads it from /proc: another user's process needs root,
 * as the setup scripts do.
 */
export function listenerPid(port: number): number {
  const { stdout } = spawnSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(stdout)?.[1];
  if (pid === undefined) {
    throw new Error(`no process of this machine that this user may see listens on port ${port}`);
  }
  return Number(pid);
}

/**
 * CPU seconds of the children of this process that have ended and been waited for: a child
 * process (an import) costs what this grows by between its start and its end.
 */
export function endedChildrenSeconds(): number {
  return (procStat('self')?.endedChildrenTicks ?? 0) / TICKS_PER_SECOND;
}

/** This process's own CPU seconds, all its threads. */
export function ownSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * CPU seconds of the PostgreSQL server at `url`, which must run on this machine: its postmaster
 * (the parent of the backend that answers a connection) and every process it started. Always 0
 * without a URL (SQLite, whose work runs inside the servers).
 */
export async function postgresSeconds(url: string | undefined): Promise<() => number> {
  if (url === undefined) return () => 0;
  const postmaster = await withAdmin(url, async (client) => {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return procStat(rows[0]!.pid)?.ppid;
  });
  if (postmaster === undefined) {
    throw new Error(`PostgreSQL at ${new URL(url).host} does not run on this machine`);
  }
  return () => processTreeSeconds(postmaster);
}

/**
 * Named counters of CPU seconds, read together: `take()` gives each one's seconds since the
 * previous `take()` (or the account's making).
 */
export function cpuAccount<Name extends string>(counters: Record<Name, () => number>) {
  const names = Object.keys(counters) as Name[];
  const read = () => Object.fromEntries(names.map((name) => [name, counters[name]()]));
  let last = read();
  return {
    take(): Record<Name, number> {
      const now = read();
      const spent = Object.fromEntries(names.map((name) => [name, now[name]! - last[name]!]));
      last = now;
      return spent as Record<Name, number>;
    },
  };
}

export type CpuAccount<Name extends string> = ReturnType<typeof cpuAccount<Name>>;
