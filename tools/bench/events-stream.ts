// The events stream under load: one server process holds `--streams` open streams of
// one organization while a second process (event-writer.ts) writes `--rate` events a second.
// `pnpm bench:stream [--streams 1000] [--rate 1000] [--seconds 15] [--sampled 20] [--database postgres://...]`
//
// Prints the delivery delay from write to arrival (p50, p99) over the sampled streams, which
// parse every message with eventsource-parser; the other streams read and count bytes, as a
// client that keeps up does. The streams are read by a process of their own (stream-readers.ts). Also the server's RSS, and /healthz and events-list p99 measured
// beside the streams compared with the same load without streams (both while the writer writes).
// Bounded: fixed phases of `--seconds` each, 127.0.0.1 only.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { createBenchDatabase } from './bench-database.js';
import { benchTenant } from './bench-tenant.js';
import { TABLE_HEADER, formatRow, load, type LoadResult } from './load.js';

const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '15' },
    sampled: { type: 'string', default: '20' },
    database: { type: 'string' },
  },
});
const streamCount = Number(values.streams);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const sampled = Math.min(Number(values.sampled), streamCount);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-stream-'));
const database = await createBenchDatabase(directory, values.database, 'stream');
const db = createDb(database.url);
await migrateDb(db);
const { organizationId, key } = await benchTenant(db, 'Bench');
await db.close();

const server = await startServerProcess(
  { DATABASE_URL: database.url, EVENT_STREAMS_PER_KEY: String(streamCount + 10) },
  { keepOutput: false },
);

/** The writer process for `runSeconds`; resolves with the number of events it wrote. */
function writeEvents(runSeconds: number): Promise<number> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'tools/bench/event-writer.ts',
      database.url,
      String(organizationId),
      String(rate),
      String(runSeconds),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(Number(output.trim())) : reject(new Error(`writer exited ${code}`)),
    ),
  );
}

const headers = { 'Service-API-Key': key };
const lightLoad = async (runSeconds: number) => {
  const [healthz, list] = await Promise.all([
    load({
      url: `${server.baseUrl}/healthz`,
      connections: 4,
      seconds: runSeconds,
      maxRequests: 3_000 * runSeconds,
    }),
    load({
      url: `${server.baseUrl}/api/v1/events/?limit=25`,
      connections: 4,
      seconds: runSeconds,
      maxRequests: 1_500 * runSeconds,
      headers,
    }),
  ]);
  return { healthz, list };
};

try {
  // 1. Without streams, while the writer writes.
  const writingAlone = writeEvents(seconds + 2);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const alone = await lightLoad(seconds);
  await writingAlone;

  // 2. Open the streams ("now") in their own process, then write and measure beside them.
  const readers = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'tools/bench/stream-readers.ts',
      server.baseUrl,
      key,
      String(streamCount),
      String(sampled),
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let readersOutput = '';
  readers.stdout.on('data', (chunk: Buffer) => (readersOutput += chunk.toString()));
  const readersExited = new Promise<number | null>((resolve) => readers.once('exit', resolve));
  while (!readersOutput.startsWith('open\n')) {
    if (readers.exitCode !== null) throw new Error('the stream readers could not open the streams');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  /** The readers' reports so far: the complete lines after `open`. */
  const reportLines = () => readersOutput.split('\n').slice(1, -1);
  /** The readers' delivery delays since the last report. */
  const readerReport = async () => {
    const before = reportLines().length;
    readers.stdin.write('report\n');
    while (reportLines().length === before) {
      if (readers.exitCode !== null) throw new Error('the stream readers failed');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return JSON.parse(reportLines().at(-1)!) as {
      p50: number | null;
      p99: number | null;
      max: number | null;
      count: number;
      received: number;
      bytes: number;
    };
  };
  const rssIdle = server.rssMiB();
  let rssPeak = rssIdle;
  const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, server.rssMiB())), 500);
  // 2a. The streams and the writer alone.
  const writtenAlone = await writeEvents(seconds + 2);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const streamsAlone = await readerReport();
  // 2b. The same with the light requests beside them.
  const writingBeside = writeEvents(seconds + 2);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const beside = await lightLoad(seconds);
  const writtenBeside = await writingBeside;
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const streamsBeside = await readerReport();
  clearInterval(rssTimer);
  readers.stdin.end();
  if ((await readersExited) !== 0) throw new Error('the stream readers failed');

  console.log(
    `events stream, ${database.url.startsWith('postgres') ? 'PostgreSQL' : 'SQLite'}: ${streamCount} streams, writer ${rate} events/s for ${seconds + 2} s per phase`,
  );
  for (const [label, written, delays] of [
    ['streams and writer only', writtenAlone, streamsAlone],
    ['with the light requests', writtenBeside, streamsBeside],
  ] as const) {
    console.log(
      `delivery delay, ${label} (write to arrival, ${sampled} parsed streams, ${delays.count} of ${written * sampled} events): p50 ${delays.p50} ms, p99 ${delays.p99} ms, max ${delays.max} ms; other streams read ${(delays.bytes / 1024 / 1024).toFixed(1)} MiB`,
    );
  }
  console.log(
    `server RSS: ${rssIdle.toFixed(0)} MiB with the streams open, ${rssPeak.toFixed(0)} MiB peak while writing`,
  );
  console.log(TABLE_HEADER);
  const rows: Array<[string, LoadResult]> = [
    ['/healthz, no streams', alone.healthz],
    [`/healthz, ${streamCount} streams`, beside.healthz],
    ['events list, no streams', alone.list],
    [`events list, ${streamCount} streams`, beside.list],
  ];
  for (const [label, result] of rows) console.log(formatRow(label, result));
  console.log(
    `p99 ratio with streams: /healthz ${(beside.healthz.p99Ms / alone.healthz.p99Ms).toFixed(2)}x, events list ${(beside.list.p99Ms / alone.list.p99Ms).toFixed(2)}x`,
  );
} finally {
  await server.stop();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
