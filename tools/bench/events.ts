// The events list at a million events per organization (the events list at scale's benchmark):
// `pnpm bench:events [--events 1000000] [--seconds 5] [--connections 16] [--rounds 1]
// [--import-lines 1000000] [--database postgres://user:password@host:5432/postgres]`.
// Builds two organizations of `--events` each, runs every list shape against the real server
// process next to a bare Hono route answering the same bytes (with --rounds N, all of them N times
// in turn, reporting each one's medians), then times the real import CLI
// (`--events 0` times the import alone, into an empty database: `--import-lines 7200000` makes a
// 2 GB file).
// `--measure export` (`pnpm bench:export`) instead walks all of the first organization's events
// through the SDK's iterate({ limit: 1000 }), as a customer exporting them would, and compares it
// with the offset walk, estimated from sample pages at growing depths; `--measure both` runs both.
// `--measure stalls` (`pnpm bench:stalls`) measures light requests beside one connection looping
// the slowest list shape and beside an import of `--import-lines` events into the same database.
// The database is a temporary SQLite file, or with --database a new database on that PostgreSQL
// server (the role needs CREATEDB), dropped at the end.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDb, isPostgresUrl } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { createClient } from '../../packages/sdk/src/index.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { startBareBodyServer } from './bare-server.js';
import { createBenchDatabase, type BenchDatabase } from './bench-database.js';
import { buildEvents, importArguments, writeImportFile } from './bench-events.js';
import { benchKey } from './bench-tenant.js';
import { TABLE_HEADER, formatRow, load, medianOf, type LoadResult } from './load.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    'import-lines': { type: 'string', default: '1000000' },
    database: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    measure: { type: 'string', default: 'list' },
  },
});
if (!['list', 'export', 'stalls', 'both'].includes(values.measure)) {
  throw new Error('--measure takes list, export, stalls or both (list and export)');
}
if (values.database !== undefined && !isPostgresUrl(values.database)) {
  throw new Error('--database takes a postgres:// URL; without it the bench uses SQLite');
}
const perOrganization = Number(values.events);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const importLines = Number(values['import-lines']);
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error('--rounds takes a whole number, 1 or more');
const SERVER_DIR = fileURLToPath(new URL('../../apps/server', import.meta.url));

/** An NDJSON file of `lines` new events in the run's folder. */
async function importFile(lines: number): Promise<string> {
  const file = join(directory, 'import.ndjson');
  await writeImportFile(file, lines);
  return file;
}

async function timedImport(databaseUrl: string): Promise<string> {
  const file = await importFile(importLines);
  const result = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, ...(await importArguments(file, 'Bench A'))],
    { cwd: SERVER_DIR, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  const peakKiB = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)?.[1]);
  return `${result.stdout.trim()}; peak RSS ${(peakKiB / 1024).toFixed(0)} MiB`;
}

/** Runs every list shape against the real server, then the bare route, and prints the table. */
async function measureList(database: BenchDatabase, fullKey: string): Promise<void> {
  const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
  let serverErrors = '';
  server.child.stderr.on('data', (chunk: Buffer) => {
    serverErrors = (serverErrors + chunk.toString()).slice(-4000);
  });
  server.child.once('exit', (code, signal) =>
    console.log(`server exited (code ${code}, signal ${signal}): ${serverErrors}`),
  );
  const headers = { 'Service-API-Key': fullKey };
  const events = `${server.baseUrl}/api/v1/events/`;
  const searchUrl = (field: string, value: string) =>
    `${events}?search_fields=${field}&search_field_values=${encodeURIComponent(value)}`;
  const deepPage = Math.floor(perOrganization / 25) - 1;
  // Compared with the bare route at the end.
  const [defaultPage, countOnly, health] = [
    'default page',
    'limit=0 (total_count only)',
    '/healthz (no key, no database)',
  ];
  const shapes: Array<[string, string]> = [
    [defaultPage, events],
    ['session_id', searchUrl('session_id', 's-1-4321')],
    ['conversation_id', searchUrl('conversation_id', 'c-1-777')],
    ['user_id', searchUrl('user_id', '+14155551234')],
    ['category substring', searchUrl('category', 'ESS')],
    ['type substring', searchUrl('type', 'tool-')],
    [
      'time window (one day)',
      `${events}?start_datetime=2026-06-01T00:00:00Z&end_datetime=2026-06-02T00:00:00Z`,
    ],
    ['order_by session_id desc', `${events}?order_by=session_id&order_by_direction=desc`],
    ['order_by user_id asc', `${events}?order_by=user_id`],
    ['order_by category asc', `${events}?order_by=category`],
    ['order_by type desc', `${events}?order_by=type&order_by_direction=desc`],
    ['order_by timestamp asc', `${events}?order_by=timestamp`],
    ['description "refund" (~14%)', searchUrl('description', 'refund')],
    ['description "#4242" (rare)', searchUrl('description', '#4242')],
    [`deep page ${deepPage} (last)`, `${events}?page=${deepPage}`],
    [
      `deep page ${Math.floor(deepPage / 2)} (middle)`,
      `${events}?page=${Math.floor(deepPage / 2)}`,
    ],
    [`page 40000`, `${events}?page=40000`],
    // Floors of any answer of this server: the count alone (key check, highest id, cached count,
    // no rows) and /healthz (no key, no database: HTTP, Hono and the request log only).
    [countOnly, `${events}?limit=0`],
    [health, `${server.baseUrl}/healthz`],
  ];

  const defaultBody = await fetch(events, { headers }).then((r) => r.text());
  const bare = await startBareBodyServer(directory, defaultBody);
  const bareLabel = `bare Hono, same ${defaultBody.length} bytes`;
  const runs = new Map<string, { url: string; firstMs?: number; results: LoadResult[] }>();
  try {
    for (const [label, url] of shapes) {
      const firstStart = performance.now();
      const first = await fetch(url, { headers });
      await first.text();
      if (!first.ok) throw new Error(`${label}: ${first.status}`);
      runs.set(label, { url, firstMs: performance.now() - firstStart, results: [] });
    }
    runs.set(bareLabel, { url: bare.url, results: [] });
    console.log(
      `\n${2 * perOrganization} events, ${connections} connections, ${seconds} s per shape, ${rounds} round(s)`,
    );
    // Every shape once per round, the bare route included, so that a slower minute of the
    // machine weighs on all of them alike; the table gives each shape's median.
    for (let round = 1; round <= rounds; round += 1) {
      for (const [label, run] of runs) {
        await load({ url: run.url, connections, seconds: 1, headers });
        const result = await load({ url: run.url, connections, seconds, headers });
        run.results.push(result);
        if (rounds > 1) console.log(`round ${round}: ${formatRow(label, result)}`);
        await database.settle();
      }
    }
    console.log(`\n${TABLE_HEADER} ${'first ms'.padStart(9)} ${'req/s range'.padStart(14)}`);
    const medians = new Map<string, LoadResult>();
    for (const [label, run] of runs) {
      const median = medianOf(run.results);
      medians.set(label, median);
      const rates = run.results.map((r) => Math.round(r.requestsPerSecond));
      const first = run.firstMs === undefined ? '' : run.firstMs.toFixed(1);
      console.log(
        `${formatRow(label, median)} ${first.padStart(9)} ${`${Math.min(...rates)}-${Math.max(...rates)}`.padStart(14)}`,
      );
    }
    for (const label of [defaultPage, countOnly, health]) {
      const ratio =
        medians.get(label)!.requestsPerSecond / medians.get(bareLabel)!.requestsPerSecond;
      console.log(`${label} / bare Hono (req/s): ${ratio.toFixed(2)}`);
    }
    console.log(`server RSS after the runs: ${server.rssMiB().toFixed(0)} MiB`);
  } finally {
    bare.stop();
    await server.stop();
  }
}

/**
 * Exports the organization's events with the SDK's iterate (cursor pages of 1,000), timing each
 * page as the customer sees it, then estimates the offset walk from pages sampled at growing
 * depths (it is quadratic: running it whole at a million events would take hours).
 */
async function measureExport(database: BenchDatabase, fullKey: string): Promise<void> {
  const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
  try {
    const client = createClient({ apiKey: fullKey, baseUrl: server.baseUrl });
    // The connection and the cached count are set up first, so the first page is a page.
    await client.events.list({ limit: 0 });
    const pageMs: number[] = [];
    let exported = 0;
    const started = performance.now();
    let pageStarted = started;
    for await (const _event of client.events.iterate({ limit: 1000 })) {
      exported += 1;
      if (exported % 1000 === 0) {
        const now = performance.now();
        pageMs.push(now - pageStarted);
        pageStarted = now;
      }
    }
    const totalSeconds = (performance.now() - started) / 1000;
    const first = pageMs[0] ?? 0;
    const slowest = Math.max(...pageMs);
    console.log(
      `export through the SDK (cursor pages of 1,000): ${exported} events in ${totalSeconds.toFixed(1)} s ` +
        `(${Math.round(exported / totalSeconds)} events/s); first page ${first.toFixed(1)} ms, ` +
        `slowest ${slowest.toFixed(1)} ms (${(slowest / first).toFixed(2)} x the first), ` +
        `median ${medianMs(pageMs).toFixed(1)} ms`,
    );
    const pages = Math.ceil(exported / 1000);
    const samples: Array<[number, number]> = [];
    for (const share of [0, 0.25, 0.5, 0.75, 0.999]) {
      const page = Math.floor((pages - 1) * share);
      const sampleStart = performance.now();
      await client.events.list({ limit: 1000, page });
      samples.push([page, performance.now() - sampleStart]);
    }
    const meanSampleMs = samples.reduce((sum, [, ms]) => sum + ms, 0) / samples.length;
    console.log(
      `offset walk (page=N), sampled: ${samples.map(([page, ms]) => `page ${page} ${ms.toFixed(0)} ms`).join(', ')}; ` +
        `estimated whole walk ${((meanSampleMs * pages) / 1000).toFixed(0)} s`,
    );
  } finally {
    await server.stop();
  }
}

/**
 * What one heavy client costs the others: /healthz and a light list request (limit=0) at 8
 * connections each, on an idle server, then while one connection walks the slowest list shape,
 * then while `agentline events import` writes `importLines` events into the same database.
 */
async function measureStalls(database: BenchDatabase, fullKey: string): Promise<void> {
  const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
  const headers = { 'Service-API-Key': fullKey };
  const light = (runSeconds: number) =>
    Promise.all([
      load({ url: `${server.baseUrl}/healthz`, connections: 8, seconds: runSeconds }),
      load({
        url: `${server.baseUrl}/api/v1/events/?limit=0`,
        connections: 8,
        seconds: runSeconds,
        headers,
      }),
    ]);
  // A new page every request: the same one would be a kept answer after the first.
  const slowest = (page: number) =>
    `/api/v1/events/?search_fields=timestamp&search_field_values=2026&order_by=session_id&limit=1000&page=${page}`;
  try {
    await light(2);
    const idle = await light(seconds);
    await database.settle();
    const [busy, heavy] = await Promise.all([
      light(seconds),
      load({
        url: `${server.baseUrl}${slowest(300)}`,
        pathOf: (n) => slowest(300 + (n % 600)),
        connections: 1,
        seconds,
        headers,
      }),
    ]);
    await database.settle();
    const file = await importFile(importLines);
    const importer = spawn(process.execPath, await importArguments(file, 'Bench A'), {
      cwd: SERVER_DIR,
      env: { ...process.env, DATABASE_URL: database.url },
      stdio: 'ignore',
    });
    const imported = new Promise((resolve) => importer.once('exit', resolve));
    const duringImport = await light(seconds);
    importer.kill();
    await imported;
    console.log(`\nlight requests beside a heavy client (${seconds} s each, 8 connections each):`);
    console.log(TABLE_HEADER);
    const rows: Array<[string, LoadResult]> = [
      ['/healthz, idle', idle[0]],
      ['limit=0, idle', idle[1]],
      ['/healthz, slowest shape looping', busy[0]],
      ['limit=0, slowest shape looping', busy[1]],
      ['slowest shape itself (1 connection)', heavy],
      [`/healthz, during an import`, duringImport[0]],
      [`limit=0, during an import`, duringImport[1]],
    ];
    for (const [label, result] of rows) console.log(formatRow(label, result));
    console.log(
      `p99 ratio beside the slowest shape: /healthz ${(busy[0].p99Ms / idle[0].p99Ms).toFixed(2)}, ` +
        `limit=0 ${(busy[1].p99Ms / idle[1].p99Ms).toFixed(2)} (target <= 2); ` +
        `/healthz p99 during the import ${duringImport[0].p99Ms} ms (target < 50)`,
    );
  } finally {
    await server.stop();
  }
}

function medianMs(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-events-'));
const database = await createBenchDatabase(directory, values.database, 'events');
const databaseUrl = database.url;
try {
  const db = createDb(databaseUrl);
  await migrateDb(db);
  const organizations = [
    await createOrganization(db, 'Bench A'),
    await createOrganization(db, 'Bench B'),
  ];
  if (perOrganization > 0) {
    await buildEvents(
      db,
      organizations.map((o) => o.id),
      perOrganization,
    );
    const fullKey = await benchKey(db, organizations[0]!.id);
    await db.close();
    if (values.measure === 'stalls') await measureStalls(database, fullKey);
    if (values.measure === 'list' || values.measure === 'both')
      await measureList(database, fullKey);
    if (values.measure === 'export' || values.measure === 'both')
      await measureExport(database, fullKey);
  } else {
    await db.close();
    console.log('--events 0: no list to measure, the import alone');
  }

  if (importLines > 0 && values.measure !== 'stalls') {
    console.log(`\nimport of ${importLines} NDJSON lines into the same database (new events):`);
    console.log(await timedImport(databaseUrl));
  }
} finally {
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
