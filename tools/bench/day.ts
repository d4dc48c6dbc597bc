// A working day on server processes sharing one database: `pnpm bench day [--database
// postgres://... [--read-database postgres://...] [--pooler postgres://...]] [--fleet
// [--rolling-restart]] [--minutes 10] [--rate 1] [--closed-seconds 15] [--server-env KEY=VALUE]...`.
// README.md's table of commands says what each option does and what the day prints; its parts:
// day-tenants.ts, day-servers.ts, day-traffic.ts, day-cpu.ts and day-closed-loop.ts.

import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../apps/server/src/config.js';
import { postgresUrlOf } from '../../apps/server/test/support/test-database.js';
import type { ServerProcess } from '../../apps/server/test/support/server-process.js';
import { createClient } from '../../packages/sdk/src/index.js';
import { SERVER_DIR, options, seeded, sleep, withBenchDatabase } from './harness.js';
import { lastReadSeconds } from './cpu-accounting.js';
import { closedLoop } from './day-closed-loop.js';
import {
  cliBackendSeconds,
  costPhases,
  cpuReport,
  dayCpuAccount,
  type ImportCpu,
} from './day-cpu.js';
import { importArguments, writeImportFile } from './bench-events.js';
import {
  haproxyReport,
  rollingRestartAfter,
  startDayServers,
  type DayServers,
} from './day-servers.js';
import { createDayTenants, startDayExperiments, type DayTenant } from './day-tenants.js';
import {
  newTallies,
  shapesOf,
  tenantDay,
  type DayPlan,
  type DayTallies,
  type ShapeTally,
} from './day-traffic.js';
import { Latencies, columns, envText, ms } from './report.js';

const ORGANIZATIONS = 20;
const EVENTS_PER_ORGANIZATION = 10_000;
const IMPORTED_EVENTS = 100_000;
/** Calls still in progress this long after the day's end are cut off. */
const GRACE_MS = 15_000;
/** How long after the day's end the streams may take to deliver the last routed sessions. */
const STREAM_CATCH_UP_MS = 60_000;
const RSS_EVERY_MS = 10_000;

function parseServerEnv(pairs: readonly string[]): Record<string, string> {
  // The server's own defaults: the test harness turns its per-key caps off unless told.
  const defaults = loadConfig({});
  const env: Record<string, string> = {
    CONCURRENT_REQUESTS_PER_KEY: String(defaults.concurrentRequestsPerKey),
    CONCURRENT_LIST_READS_PER_KEY: String(defaults.concurrentListReadsPerKey),
    RATE_LIMIT_PER_MINUTE: String(defaults.rateLimitPerMinute),
  };
  for (const pair of pairs) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair);
    if (!match) throw new Error(`--server-env takes KEY=VALUE, got "${pair}"`);
    env[match[1]!] = match[2]!;
  }
  return env;
}

const load1 = () => loadavg()[0]!.toFixed(2);
/** A process's RSS; none while a rolling restart has stopped it and not yet started the next. */
const rssOf = (server: ServerProcess) => {
  try {
    return server.rssMiB();
  } catch {
    return Number.NaN;
  }
};

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, {
    database: undefined,
    'read-database': undefined,
    minutes: 10,
    rate: 1,
    'closed-seconds': 15,
    'server-env': [] as string[],
    pooler: undefined,
    fleet: false,
    'rolling-restart': false,
  });
  for (const option of ['read-database', 'pooler'] as const) {
    if (values[option] !== undefined && values.database === undefined) {
      throw new Error(`--${option} goes with --database, whose server it is in front of or beside`);
    }
  }
  if (values['rolling-restart'] && !values.fleet) {
    throw new Error('--rolling-restart restarts the processes of --fleet, which it needs');
  }
  const { minutes, rate, 'closed-seconds': closedSeconds } = values;
  for (const name of ['minutes', 'rate', 'closed-seconds'] as const) {
    if (values[name] === 0) throw new Error(`--${name} takes a number above 0`);
  }
  const serverEnv = parseServerEnv(values['server-env']);
  await withBenchDatabase('day', values.database, async (database) => {
    let servers: DayServers | undefined;
    try {
      const setupStarted = performance.now();
      const tenants = await seeded(database.url, (db) =>
        createDayTenants(db, ORGANIZATIONS, EVENTS_PER_ORGANIZATION),
      );
      const importFile = join(database.directory, 'import.ndjson');
      await writeImportFile(importFile, IMPORTED_EVENTS);
      const readUrl =
        values['read-database'] === undefined
          ? undefined
          : postgresUrlOf(values['read-database'], new URL(database.url).pathname.slice(1));
      servers = await startDayServers({
        databaseUrl: database.url,
        poolerUrl: values.pooler,
        readUrl,
        serverEnv,
        fleet: values.fleet,
      });
      const { entries } = servers;
      const cpu = await dayCpuAccount(servers, database.url, readUrl);
      const daySeconds = minutes * 60;
      // A few minutes in, and always inside the day.
      const plannedEndAt = Date.now() + 5_000 + Math.min(180, daySeconds * 0.6) * 1000;
      const planned = await startDayExperiments(tenants, entries[0]!, new Date(plannedEndAt));
      console.log(
        `day on ${database.kind}${readUrl ? ' with its read replica' : ''}: ${ORGANIZATIONS} organizations, ${EVENTS_PER_ORGANIZATION} events each, ${servers.description}, ${minutes} min at rate x${rate}; setup ${((performance.now() - setupStarted) / 1000).toFixed(0)} s`,
      );
      console.log(`server env: ${envText(serverEnv)}`);
      const loadAtStart = load1();

      cpu.take();
      const dayStart = performance.now();
      const tallies = newTallies(dayStart);
      const untilMs = dayStart + daySeconds * 1000;
      const stopCalls = new AbortController();
      const stopStreams = new AbortController();
      // Every call of the day shares stopCalls' signal, as a customer's shutdown signal would: the
      // SDK keeps a call's signal off its Request, so calls in flight add no listener to it, but
      // each call waiting to retry does (many at once while a rolling restart or an overload lasts).
      // Each of the day's streams (two per organization) listens to stopStreams'.
      setMaxListeners(0, stopCalls.signal, stopStreams.signal);
      const plan: DayPlan = {
        baseUrls: entries,
        rate,
        untilMs,
        signal: stopCalls.signal,
        streamSignal: stopStreams.signal,
        planned: { id: planned.id, endAt: plannedEndAt },
      };
      // The load generator's own event loop: every latency counts from when its call fell due, so
      // a generator too busy to send on time shows here, not only as the server's slowness.
      const generatorDelay = monitorEventLoopDelay({ resolution: 10 });
      generatorDelay.enable();
      const generatorBusy = performance.eventLoopUtilization();
      const rss: number[][] = [];
      const rssTimer = setInterval(() => rss.push(servers!.processes().map(rssOf)), RSS_EVERY_MS);
      const days = Promise.all(tenants.map((tenant) => tenantDay(tenant, plan, tallies)));
      const imported = importMidway(
        database.url,
        tenants[0]!,
        importFile,
        (daySeconds / 2) * 1000,
        untilMs,
      );
      const ended = watchPlannedEnd(entries, tenants[0]!, planned.id, plannedEndAt, untilMs);
      // A quarter into the day: done before the import midway, unless the machine is slow.
      const restarted = values['rolling-restart']
        ? rollingRestartAfter(servers, (daySeconds / 4) * 1000)
        : undefined;
      // Everything stops by itself at untilMs. The streams then close once they have delivered
      // every session routed after they opened, or STREAM_CATCH_UP_MS after the day: what they owe
      // then is lost. What is still in progress after the grace is cut.
      await sleep(untilMs - performance.now() + 2_000);
      while (tallies.streams.count().lost > 0 && performance.now() < untilMs + STREAM_CATCH_UP_MS) {
        await sleep(250);
      }
      const streamed = tallies.streams.count();
      const streamsClosedAfter = (performance.now() - untilMs) / 1000;
      stopStreams.abort();
      const cut = setTimeout(() => {
        tallies.wire.over = true;
        stopCalls.abort();
      }, GRACE_MS);
      const [, importReport, endReport, restartReport] = await Promise.all([
        days,
        imported,
        ended,
        restarted,
      ]);
      clearTimeout(cut);
      clearInterval(rssTimer);
      tallies.wire.over = true;
      const dayCpu = cpu.take();

      generatorDelay.disable();
      report(tallies, daySeconds);
      for (const line of [restartReport, haproxyReport(servers)]) if (line) console.log(line);
      console.log(
        `streams: ${streamed.streams} open, closed ${streamsClosedAfter.toFixed(1)} s after the day; of the sessions routed after each opened they owed ${streamed.expected} events, delivered ${streamed.delivered}, lost ${streamed.lost}; events delivered twice ${streamed.repeated}`,
      );
      console.log(
        `load generator: event loop busy ${(performance.eventLoopUtilization(generatorBusy).utilization * 100).toFixed(0)} % of the day, its delay p50 ${ms(generatorDelay.percentile(50) / 1e6)} ms, p99 ${ms(generatorDelay.percentile(99) / 1e6)} ms, max ${ms(generatorDelay.max / 1e6)} ms`,
      );
      console.log(
        importReport.line + `; streams received ${tallies.streamedOthers} events not from routing`,
      );
      console.log(endReport + `; sessions routed into it after end_at: ${tallies.routedAfterEnd}`);
      for (const i of servers.processes().keys()) console.log(rssReport(rss, i));
      console.log(
        `load average (1 min): ${loadAtStart} at the start, ${load1()} at the end of the day`,
      );

      const serverAndDbPerMinute = cpuReport(dayCpu, importReport.cpu, minutes, tallies);
      await database.settle();
      await costPhases(tenants, plan, cpu);
      await database.settle();
      const closed = await closedLoop(tenants, entries, database, closedSeconds);
      const size = await database.sizeBytes();
      console.log(`database size at the end: ${(size / 1024 / 1024).toFixed(0)} MiB`);
      const listLatencies = Latencies.merged(Object.values(tallies.lists).map((l) => l.latencies));
      const errors =
        tallies.wire.count((status) => status >= 500 || (status >= 400 && status !== 429)) +
        tallies.wire.networkErrors;
      const failed =
        shapesOf(tallies).reduce((n, [, shape]) => n + shape.failed, 0) +
        tallies.streamFailures.length;
      console.log(
        `day: refusals ${tallies.wire.count((status) => status === 429)}, errors ${errors}, ` +
          `failed calls ${failed}, lost stream events ${streamed.lost}, ` +
          `routing p99 ${ms(tallies.routing.latencies.percentile(99))} ms, list p99 ${ms(listLatencies.percentile(99))} ms, ` +
          `stream p99 ${ms(tallies.delivery.percentile(99))} ms, varied/bare ${closed.toFixed(2)}, ` +
          `server+db core-s per minute ${serverAndDbPerMinute.toFixed(1)}`,
      );
    } finally {
      await servers?.stop();
    }
  });
}

const shapeRow = columns(22, 9, 9, 8, 8, 8, 7, 5);

function shapeLine(label: string, shape: ShapeTally, seconds: number): string {
  const { latencies } = shape;
  return shapeRow(
    label,
    ms(latencies.percentile(50)),
    ms(latencies.percentile(99)),
    (latencies.count / seconds).toFixed(1),
    latencies.count,
    shape.refused,
    shape.failed,
    shape.cut,
  );
}

function report(tallies: DayTallies, seconds: number): void {
  console.log(
    `\nopen loop, latency from when each call was due (SDK retries included):\n${shapeRow('shape', 'p50 ms', 'p99 ms', 'ok/s', 'ok', '429 end', 'failed', 'cut')}`,
  );
  for (const [label, shape] of shapesOf(tallies)) console.log(shapeLine(label, shape, seconds));
  const lists = Object.values(tallies.lists);
  const minutes = Math.max(tallies.routing.byMinute.length, ...lists.map((l) => l.byMinute.length));
  const p99s = (parts: (minute: number) => Latencies[]) =>
    Array.from({ length: minutes }, (_, minute) =>
      ms(Latencies.merged(parts(minute)).percentile(99)),
    ).join(' ');
  console.log(
    `p99 ms by minute (the import runs in minute ${Math.floor(seconds / 120)}): routing ${p99s((m) => [tallies.routing.byMinute[m] ?? new Latencies()])}; lists ${p99s((m) => lists.map((l) => l.byMinute[m] ?? new Latencies()))}`,
  );
  const { delivery } = tallies;
  console.log(
    `stream delivery (timestamp to arrival, routed sessions): p50 ${ms(delivery.percentile(50))} ms, p99 ${ms(delivery.percentile(99))} ms, max ${ms(delivery.percentile(100))} ms over ${delivery.count} events; walks read ${tallies.walkedEvents} events`,
  );
  const { wire } = tallies;
  console.log(
    `answers on the wire: 2xx ${wire.count((s) => s < 300)}, 429 ${wire.count((s) => s === 429)}, other 4xx ${wire.count((s) => s >= 400 && s < 500 && s !== 429)}${byStatus(wire, (s) => s >= 400 && s < 500 && s !== 429)}, 5xx ${wire.count((s) => s >= 500)}${byStatus(wire, (s) => s >= 500)}, network errors ${wire.networkErrors}${wire.networkErrors > 0 ? ` (${[...wire.networkCauses].map(([c, n]) => `${c} ${n}`).join(', ')}; after p50 ${ms(wire.networkErrorAfter.percentile(50))} ms, max ${ms(wire.networkErrorAfter.percentile(100))} ms)` : ''}; arrivals dropped at the client's cap: ${tallies.droppedSessions} sessions, ${tallies.droppedBursts} dashboard bursts`,
  );
  const failures = [
    ...shapesOf(tallies).flatMap(([, shape]) => shape.firstFailures),
    ...tallies.streamFailures,
  ];
  if (failures.length > 0) console.log(`first failures: ${failures.slice(0, 5).join(' | ')}`);
}

/**
 * The answers with the statuses `test` picks, by status, if any: HAProxy's 408 (a request not
 * sent whole within its 10 s) and 502-504 apart from the server's answers.
 */
function byStatus(wire: DayTallies['wire'], test: (status: number) => boolean): string {
  const statuses = [...wire.byStatus].filter(([status]) => test(status)).sort(([a], [b]) => a - b);
  return statuses.length === 0 ? '' : ` (${statuses.map(([s, n]) => `${s}: ${n}`).join(', ')})`;
}

/** Process `index`'s RSS samples, and whether the last quarter's mean stayed near the second's. */
function rssReport(rss: ReadonlyArray<readonly number[]>, index: number): string {
  const samples = rss.map((sample) => sample[index]!);
  const quarter = Math.floor(samples.length / 4);
  const mean = (from: number, to: number) => {
    const read = samples.slice(from, to).filter(Number.isFinite);
    return read.reduce((sum, v) => sum + v, 0) / read.length;
  };
  const second = mean(quarter, 2 * quarter);
  const last = mean(samples.length - quarter, samples.length);
  const change = (last / second - 1) * 100;
  const verdict =
    quarter === 0 || !Number.isFinite(change)
      ? 'too few samples to tell'
      : `last quarter ${change >= 0 ? '+' : ''}${change.toFixed(1)}% on the second: ${Math.abs(change) <= 10 ? 'flat' : change > 0 ? 'GROWING' : 'shrinking'}`;
  return `server ${index} RSS MiB every ${RSS_EVERY_MS / 1000} s: ${samples.map((v) => (Number.isNaN(v) ? '-' : v.toFixed(0))).join(' ')} (${verdict})`;
}

/** `agentline events import` of the file into `tenant`, started `afterMs` into the day. */
async function importMidway(
  databaseUrl: string,
  tenant: DayTenant,
  file: string,
  afterMs: number,
  untilMs: number,
): Promise<{ line: string; cpu: ImportCpu }> {
  await sleep(afterMs);
  // Before the clock starts: the first call may build the server's bundle.
  const args = await importArguments(file, tenant.name);
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: SERVER_DIR,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Read in its own /proc while it runs, every 100 ms: what this process's ended children spent
  // would count the server processes a rolling restart ends meanwhile too.
  const cpu = lastReadSeconds(() => [child.pid!]);
  const reading = setInterval(cpu, 100);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const cutOff = setTimeout(() => child.kill(), untilMs + GRACE_MS - performance.now());
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const backendSeconds = cliBackendSeconds(databaseUrl, exited);
  const code = await exited;
  clearTimeout(cutOff);
  clearInterval(reading);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const importCpu = { processSeconds: cpu(), backendSeconds: await backendSeconds };
  const line = `import of ${IMPORTED_EVENTS} events into ${tenant.name} at ${(afterMs / 1000).toFixed(0)} s: exit ${code} after ${seconds} s (${output.trim().split('\n').at(-1)}), ${importCpu.processSeconds.toFixed(1)} core-s in its process, ${importCpu.backendSeconds.toFixed(1)} in the database's`;
  return { line, cpu: importCpu };
}

/**
 * Reads the experiment with a planned end from a second before its end_at until it reads
 * stopped: says whether a read sent after end_at still found it running, and how the stop reads.
 */
async function watchPlannedEnd(
  entries: readonly string[],
  tenant: DayTenant,
  experimentId: number,
  endAt: number,
  untilMs: number,
): Promise<string> {
  const client = createClient({ apiKey: tenant.key, baseUrl: entries[1 % entries.length]! });
  const label = `planned end at ${new Date(endAt).toISOString()}`;
  await sleep(endAt - Date.now() - 1_000);
  let runningAfterEnd = 0;
  while (performance.now() < untilMs) {
    const sentAt = Date.now();
    const experiment = await client.experiments.get(experimentId);
    const readMs = Date.now() - sentAt;
    if (experiment.status !== 'stopped') {
      if (sentAt > endAt) runningAfterEnd += 1;
      await sleep(250);
      continue;
    }
    const asPlanned =
      experiment.ended_reason === 'end_at' && Date.parse(experiment.stopped_at!) === endAt;
    return `${label}: first read stopped was sent at ${sentAt - endAt} ms and answered at ${sentAt + readMs - endAt} ms from it; reads sent after it that found it running: ${runningAfterEnd}; ended_reason ${experiment.ended_reason}, stopped_at ${asPlanned ? '= end_at' : experiment.stopped_at}`;
  }
  return `${label}: NOT ENDED by the end of the day`;
}
