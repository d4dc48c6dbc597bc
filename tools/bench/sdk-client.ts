// The SDK's own CPU time per call, the client side of every integration:
// `pnpm bench:sdk [--calls 20000] [--concurrency 16] [--rounds 3]`.
//
// This checkout's SDK, with its defaults, calls a bare Hono process (bare-server.ts) answering
// fixed bytes, so this process's CPU time is the SDK's: openapi-fetch, the retrying fetch, undici
// and the JSON. Two calls: routing a session (a POST with its Idempotency-Key) and an events page
// (a GET). Per call: this process's user + system time over --calls calls, --concurrency at once;
// the minimum over the rounds is the figure (a slow round is the machine, never a faster SDK).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type AgentlineClient } from '../../packages/sdk/src/index.js';
import { startBareBodyServer } from './bare-server.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
  },
});
const calls = Number(values.calls);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
for (const [name, value] of [
  ['--calls', calls],
  ['--concurrency', concurrency],
  ['--rounds', rounds],
] as const) {
  if (!(Number.isInteger(value) && value > 0))
    throw new Error(`${name} takes a whole number above 0`);
}

/** Both calls read this one answer: the SDK does not check a body's shape. */
const ANSWER = JSON.stringify({
  id: '0b3f6b2e-4f7a-4d55-9a63-2f1c6f0e9d11',
  agent_id: 1,
  experiment_id: null,
  created_at: '2026-11-27T00:00:00.000Z',
  data: [],
  total_count: 0,
});

const shapes: Record<string, (client: AgentlineClient) => Promise<unknown>> = {
  'route a session (POST)': (client) => client.sessions.route(1, { user_id: '+14155550100' }),
  'events page (GET)': (client) => client.events.list({ limit: 10 }),
};

/** The CPU time per call, in microseconds, of `count` calls with `concurrency` in flight. */
async function cpuPerCall(call: () => Promise<unknown>, count: number): Promise<number> {
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started += 1;
      await call();
    }
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-sdk-'));
const bare = await startBareBodyServer(directory, ANSWER);
try {
  const client = createClient({ apiKey: 'bench', baseUrl: bare.url.replace(/\/$/, '') });
  const figures = new Map<string, number[]>();
  for (let round = 0; round < rounds; round += 1) {
    for (const [shape, call] of Object.entries(shapes)) {
      // A warm-up of a tenth, so the JIT and the connection pool are ready.
      await cpuPerCall(() => call(client), Math.ceil(calls / 10));
      const perCall = await cpuPerCall(() => call(client), calls);
      figures.set(shape, [...(figures.get(shape) ?? []), perCall]);
      console.log(`round ${round + 1}: ${shape}: ${perCall.toFixed(1)} µs of CPU per call`);
    }
  }
  console.log(
    `\nSDK CPU per call, minimum of ${rounds} rounds of ${calls} (${concurrency} at once):`,
  );
  for (const [shape, perCall] of figures) {
    console.log(`${shape.padEnd(24)} ${Math.min(...perCall).toFixed(1)} µs`);
  }
} finally {
  bare.stop();
  rmSync(directory, { recursive: true, force: true });
}
