// Session routing throughput over HTTP with a running 50/50 experiment (issue #5's benchmark):
// `pnpm bench:sessions [--seconds 10] [--connections 16]`. Prints latency, sessions/s and
// checks that every answered session was stored and counted in the results.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDb, migrateDb } from '../../apps/server/src/db/client.js';
import { loadPlatformRecords } from '../../apps/server/src/db/repositories/platform-records.js';
import { platformRecordsSchema } from '../../apps/server/src/db/platform-records-format.js';
import { channelTargets } from '../../apps/server/src/db/schema.js';
import { createTenant } from '../../apps/server/test/support/harness.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { TABLE_HEADER, formatRow, load } from './load.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-sessions-'));
const databaseUrl = join(directory, 'bench.db');
const db = createDb(databaseUrl);
assert(db.kind === 'sqlite', 'the session routing bench writes a SQLite file');
await migrateDb(db);
// An organization with an admin role and key, as the server tests make them.
const { organizationId, key: fullKey } = await createTenant(db, 'Bench');
const { ids } = await loadPlatformRecords(
  db,
  organizationId,
  platformRecordsSchema.parse({
    prompts: [
      {
        name: 'p',
        context: 'Answer.',
        llm_config: { model: 'm', provider: 'openai', version: null },
      },
    ],
    agents: [
      { name: 'a', prompt: 'p', pinned_prompt_version: 1 },
      { name: 'b', prompt: 'p', pinned_prompt_version: 1 },
    ],
    channels: [{ name: 'web', kind: 'web_chat', targets: [{ target: 'main', agent: 'a' }] }],
  }),
);
const [target] = db.orm.select({ id: channelTargets.id }).from(channelTargets).all();
const targetId = target!.id;
db.close();

const server = await startServerProcess({ DATABASE_URL: databaseUrl }, { keepOutput: false });
const headers = { 'Service-API-Key': fullKey, 'Content-Type': 'application/json' };
try {
  const created = await fetch(`${server.baseUrl}/api/v1/experiments/`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      name: 'bench',
      target_id: targetId,
      variants: [
        { name: 'a', weight: 50, is_control: true, agent_id: ids.agents!.a },
        { name: 'b', weight: 50, agent_id: ids.agents!.b },
      ],
    }),
  }).then((r) => r.json() as Promise<{ id: number }>);
  await fetch(`${server.baseUrl}/api/v1/experiments/${created.id}/start`, {
    method: 'POST',
    headers,
  });

  // Warm-up, then the measured run.
  await load({
    url: `${server.baseUrl}/api/v1/channels/targets/${targetId}/sessions`,
    connections,
    seconds: 2,
    method: 'POST',
    headers,
    body: '{"user_id":"warm"}',
  });
  const result = await load({
    url: `${server.baseUrl}/api/v1/channels/targets/${targetId}/sessions`,
    connections,
    seconds,
    method: 'POST',
    headers,
    body: '{"user_id":"+14155550100"}',
  });
  const results = await fetch(`${server.baseUrl}/api/v1/experiments/${created.id}/results`, {
    headers,
  }).then((r) => r.json() as Promise<{ variants: Array<{ session_count: number }> }>);
  const counted = results.variants.reduce((sum, v) => sum + v.session_count, 0);
  console.log(
    `session routing, ${connections} connections, ${seconds} s, server RSS ${server.rssMiB().toFixed(0)} MiB`,
  );
  console.log(TABLE_HEADER);
  console.log(formatRow('POST .../targets/{id}/sessions', result));
  console.log(
    `sessions counted in results: ${counted} (answered 2xx: ${result.requests - result.non2xx} + warm-up)`,
  );
} finally {
  await server.stop();
  rmSync(directory, { recursive: true, force: true });
}
