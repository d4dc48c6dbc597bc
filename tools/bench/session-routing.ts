// Session routing throughput over HTTP with a running 50/50 experiment (session routing's benchmark):
// `pnpm bench:sessions [--seconds 5] [--rounds 3] [--connections 16] [--database postgres://...]`.
// Measures the path SDK users take, a fresh Idempotency-Key on every POST (the headline), beside
// requests without a key, and keyed again with a planned end set (an end_at a year ahead; a
// max_sessions cap that is never reached). Each round runs the four once, each on an experiment
// of its own, in an order that turns by one every round: the database grows as the runs go, and
// a fixed order would hand the later shapes a bigger one. On SQLite every round also runs routing's
// limit: a bare Hono app in a process of its own answering the same POST with one indexed insert
// into the same file (bare-server.ts). Prints each shape's median round, the ratios of the medians
// (and keyed / unkeyed within each round), and checks that every answered session was counted in
// the results.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb, isPostgresUrl } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { createClient } from '../../packages/sdk/src/index.js';
import { benchRoutingTenant, routingRequest, startSplitExperiment } from './bench-tenant.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { startBareInsertServer } from './bare-server.js';
import { createBenchDatabase } from './bench-database.js';
import { TABLE_HEADER, formatRow, load, medianOf, type LoadResult } from './load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    database: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-sessions-'));
const database = await createBenchDatabase(directory, values.database, 'sessions');
const db = createDb(database.url);
await migrateDb(db);
// An organization with an admin role and key, as the server tests make them.
const tenant = await benchRoutingTenant(db, 'Bench');
const { key: fullKey, targetId } = tenant;
await db.close();

const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
const onSqlite = !isPostgresUrl(database.url);
const bareInsert = onSqlite ? await startBareInsertServer(database.url) : undefined;
const client = createClient({ apiKey: fullKey, baseUrl: server.baseUrl });

interface Shape {
  label: string;
  keyed: boolean;
  plannedEnd: () => Parameters<typeof startSplitExperiment>[3];
}

const SHAPES: Shape[] = [
  { label: 'keyed (a new Idempotency-Key each)', keyed: true, plannedEnd: () => ({}) },
  { label: 'unkeyed', keyed: false, plannedEnd: () => ({}) },
  {
    label: 'keyed, planned end_at set',
    keyed: true,
    plannedEnd: () => ({ end_at: new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString() }),
  },
  { label: 'keyed, max_sessions set', keyed: true, plannedEnd: () => ({ max_sessions: 1e9 }) },
];

try {
  const sessions = `${server.baseUrl}/api/v1/channels/targets/${targetId}/sessions`;
  const run = (runSeconds: number, keyed: boolean, url = sessions) =>
    load({ url, connections, seconds: runSeconds, ...routingRequest(fullKey, keyed) });
  /** One run of `shape` on an experiment of its own; the sessions its results count. */
  async function measure(shape: Shape, runSeconds: number) {
    const experiment = await startSplitExperiment(client, tenant, shape.label, shape.plannedEnd());
    const result = await run(runSeconds, shape.keyed);
    const results = await client.experiments.results(experiment.id);
    await client.experiments.stop(experiment.id);
    await database.settle();
    return { result, counted: results.total_sessions };
  }

  await measure(SHAPES[0]!, 2); // warm-up
  const runs = SHAPES.map(() => [] as LoadResult[]);
  const bareRuns: LoadResult[] = [];
  let counted = 0;
  let answered = 0;
  for (let round = 0; round < rounds; round += 1) {
    for (let turn = 0; turn < SHAPES.length; turn += 1) {
      const index = (round + turn) % SHAPES.length;
      const measured = await measure(SHAPES[index]!, seconds);
      runs[index]!.push(measured.result);
      counted += measured.counted;
      answered += measured.result.requests - measured.result.non2xx - measured.result.errors;
    }
    if (bareInsert) {
      bareRuns.push(await run(seconds, false, bareInsert.url));
      await database.settle();
    }
  }
  const [keyedRuns, unkeyedRuns] = runs as [LoadResult[], LoadResult[]];
  const [keyed, unkeyed, keyedWithEndAt, keyedCapped] = runs.map(medianOf) as [
    LoadResult,
    LoadResult,
    LoadResult,
    LoadResult,
  ];
  console.log(
    `session routing on ${onSqlite ? 'sqlite' : 'postgres'}, ${connections} connections, ${rounds} rounds of ${seconds} s per shape (median round shown), server RSS ${server.rssMiB().toFixed(0)} MiB`,
  );
  console.log(TABLE_HEADER);
  SHAPES.forEach((shape, index) => console.log(formatRow(shape.label, medianOf(runs[index]!))));
  const bare = bareRuns.length > 0 ? medianOf(bareRuns) : undefined;
  if (bare) console.log(formatRow('bare Hono, one indexed insert', bare));
  const ratio = (a: LoadResult, b: LoadResult) =>
    (a.requestsPerSecond / b.requestsPerSecond).toFixed(2);
  console.log(`keyed / unkeyed: ${ratio(keyed, unkeyed)} (target >= 0.9)`);
  // A round's keyed and unkeyed runs are seconds apart, rounds a minute: when the machine's speed
  // drifts between rounds, the ratio within each round says more than the ratio of the medians.
  console.log(
    `keyed / unkeyed within each round: ${keyedRuns.map((run, round) => ratio(run, unkeyedRuns[round]!)).join(', ')}`,
  );
  if (bare) console.log(`unkeyed / bare insert: ${ratio(unkeyed, bare)} (target >= 0.25)`);
  console.log(
    `keyed with end_at / keyed without: ${ratio(keyedWithEndAt, keyed)} (target >= 0.9); with max_sessions: ${ratio(keyedCapped, keyed)}`,
  );
  // Requests cut off at the end of a run may have been stored without their answer arriving.
  console.log(`sessions counted in results: ${counted} (answered 2xx: ${answered})`);
} finally {
  bareInsert?.stop();
  await server.stop();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
