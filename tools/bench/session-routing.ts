// Session routing throughput over HTTP with a running 50/50 experiment (issue #5's benchmark):
// `pnpm bench:sessions [--seconds 10] [--connections 16] [--database postgres://...]`. Measures
// the path SDK users take, a fresh Idempotency-Key on every POST (the headline), beside requests
// without a key, prints latency, sessions/s and their ratio, and checks that every answered
// session was stored and counted in the results. Then the keyed run again with a planned end set
// (an end_at a year ahead; then a max_sessions cap that is never reached), against the first.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { benchRoutingTenant } from './bench-tenant.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { createBenchDatabase } from './bench-database.js';
import { TABLE_HEADER, formatRow, load } from './load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    database: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-sessions-'));
const database = await createBenchDatabase(directory, values.database, 'sessions');
const db = createDb(database.url);
await migrateDb(db);
// An organization with an admin role and key, as the server tests make them.
const { key: fullKey, agentIds, targetId } = await benchRoutingTenant(db, 'Bench');
await db.close();

const server = await startServerProcess({ DATABASE_URL: database.url }, { keepOutput: false });
const headers = { 'Service-API-Key': fullKey, 'Content-Type': 'application/json' };
/** Creates and starts a 50/50 experiment on the target, with `plannedEnd` fields if given. */
async function startExperiment(name: string, plannedEnd: Record<string, unknown> = {}) {
  const created = await fetch(`${server.baseUrl}/api/v1/experiments/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name,
      target_id: targetId,
      variants: [
        { name: 'a', weight: 50, is_control: true, agent_id: agentIds.a! },
        { name: 'b', weight: 50, agent_id: agentIds.b! },
      ],
      ...plannedEnd,
    }),
  }).then((r) => r.json() as Promise<{ id: number }>);
  await fetch(`${server.baseUrl}/api/v1/experiments/${created.id}/start`, {
    method: 'POST',
    headers,
  });
  return created;
}

const stopExperiment = (id: number) =>
  fetch(`${server.baseUrl}/api/v1/experiments/${id}/stop`, { method: 'POST', headers });

try {
  const created = await startExperiment('bench');

  const sessions = `${server.baseUrl}/api/v1/channels/targets/${targetId}/sessions`;
  const run = (runSeconds: number, keyed: boolean) =>
    load({
      url: sessions,
      connections,
      seconds: runSeconds,
      method: 'POST',
      headers,
      body: '{"user_id":"+14155550100"}',
      freshIdempotencyKeys: keyed,
    });
  // Warm-up, then the measured runs, keyed (what the SDK sends) and unkeyed in turn.
  await run(2, true);
  const keyed = await run(seconds, true);
  await database.settle();
  const unkeyed = await run(seconds, false);
  const results = await fetch(`${server.baseUrl}/api/v1/experiments/${created.id}/results`, {
    headers,
  }).then((r) => r.json() as Promise<{ variants: Array<{ session_count: number }> }>);
  const counted = results.variants.reduce((sum, v) => sum + v.session_count, 0);
  await stopExperiment(created.id);

  await database.settle();
  const endAt = new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString();
  const withEndAt = await startExperiment('bench end_at', { end_at: endAt });
  const keyedWithEndAt = await run(seconds, true);
  await stopExperiment(withEndAt.id);
  await database.settle();
  const capped = await startExperiment('bench max_sessions', { max_sessions: 1_000_000_000 });
  const keyedCapped = await run(seconds, true);
  await stopExperiment(capped.id);
  console.log(
    `session routing on ${database.url.startsWith('postgres') ? 'postgres' : 'sqlite'}, ${connections} connections, ${seconds} s each, server RSS ${server.rssMiB().toFixed(0)} MiB`,
  );
  console.log(TABLE_HEADER);
  console.log(formatRow('keyed (a new Idempotency-Key each)', keyed));
  console.log(formatRow('unkeyed', unkeyed));
  console.log(formatRow('keyed, planned end_at set', keyedWithEndAt));
  console.log(formatRow('keyed, max_sessions set', keyedCapped));
  console.log(
    `keyed / unkeyed: ${(keyed.requestsPerSecond / unkeyed.requestsPerSecond).toFixed(2)} (target >= 0.85)`,
  );
  console.log(
    `keyed with end_at / keyed without: ${(keyedWithEndAt.requestsPerSecond / keyed.requestsPerSecond).toFixed(2)} (target >= 0.9); with max_sessions: ${(keyedCapped.requestsPerSecond / keyed.requestsPerSecond).toFixed(2)}`,
  );
  const answered = keyed.requests - keyed.non2xx + unkeyed.requests - unkeyed.non2xx;
  console.log(`sessions counted in results: ${counted} (answered 2xx: ${answered} + warm-up)`);
} finally {
  await server.stop();
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
