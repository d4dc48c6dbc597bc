// What one organization's slow searches cost another organization (the hostile-client review's benchmark):
// `pnpm bench:tenants [--events 1000000] [--seconds 20] [--concurrency 64] [--hammer]
// [--per-key <n>] [--list-reads <n>] [--list-timeout <ms>] [--compare-off] [--rounds 1]
// [--database postgres://user:password@host:5432/postgres]`.
//
// Organization A gets `--events` events (the events benchmark's data, bench-events.ts);
// organization B gets a channel target and agents. Against the real server process, B's session
// routing and agents list are timed alone first, then while A's key keeps `--concurrency`
// uncached searches of `attributes` for a 1,000-character value in flight for `--seconds`
// (each worker sends its next search when the last is answered; after a 429 it waits what
// Retry-After says, as the SDK does, or with --hammer sends again at once). Prints p50, p99 and
// max of B's requests and A's answers by status. The server runs with its defaults, or with
// --per-key (CONCURRENT_REQUESTS_PER_KEY), --list-reads (CONCURRENT_LIST_READS_PER_KEY) and
// --list-timeout (LIST_QUERY_TIMEOUT_MS); --compare-off also measures it with all three off
// (what the pool split alone gives), in turn with the first in each of `--rounds` rounds, on the
// same data.
// The database is a temporary SQLite file, or with --database a new database on that PostgreSQL
// server (the role needs CREATEDB), dropped at the end.

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../apps/server/src/config.js';
import { createDb, isPostgresUrl } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { platformRecordsSchema } from '../../apps/server/src/records/format.js';
import { loadedIds } from '../../apps/server/src/records/load-result.js';
import { loadPlatformRecords } from '../../apps/server/src/records/loader.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { createBenchDatabase } from './bench-database.js';
import { buildEvents } from './bench-events.js';
import { benchTenant } from './bench-tenant.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '64' },
    hammer: { type: 'boolean', default: false },
    'per-key': { type: 'string' },
    'list-reads': { type: 'string' },
    'list-timeout': { type: 'string' },
    'compare-off': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    database: { type: 'string' },
  },
});
if (values.database !== undefined && !isPostgresUrl(values.database)) {
  throw new Error('--database takes a postgres:// URL; without it the bench uses SQLite');
}
const events = Number(values.events);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const defaults = loadConfig({});
const perKey = values['per-key'] ?? String(defaults.concurrentRequestsPerKey);
const listReads = values['list-reads'] ?? String(defaults.concurrentListReadsPerKey);
const listTimeout = values['list-timeout'] ?? String(defaults.listQueryTimeoutMs);
/** How long B is timed alone, before A starts. */
const IDLE_SECONDS = 5;

/**
 * 1,000 characters (a search value may have 1,024) that a URL carries as they are, beginning
 * like a key of the generated attributes (`{"agent_id": 12, ...}`) so the search compares a
 * little of each row, and ending with a number of their own, so no two searches share a cached
 * count. On PostgreSQL, ILIKE folds the case of the whole value for every row.
 */
let searches = 0;
function searchValue(): string {
  searches += 1;
  const tail = `-${process.pid}-${searches}`;
  return 'agent_id'.repeat(125).slice(0, 1000 - tail.length) + tail;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function summary(label: string, samples: readonly number[], failures: number): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const cells = [50, 99, 100].map((p) => percentile(sorted, p).toFixed(1).padStart(9));
  return `${label.padEnd(30)} ${cells.join(' ')} ${String(samples.length).padStart(9)} ${String(failures).padStart(9)}`;
}

const HEADER = `${'request'.padEnd(30)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)} ${'max ms'.padStart(9)} ${'requests'.padStart(9)} ${'non-200'.padStart(9)}`;

function timeOne(request: () => Promise<Response>) {
  const started = performance.now();
  return request().then(async (response) => {
    await response.arrayBuffer();
    return { ms: performance.now() - started, status: response.status };
  });
}

/**
 * One measurement against a server process with `configuration` added to its environment: B
 * alone, then B beside A's searches; prints the table.
 */
async function measure(
  configuration: Record<string, string>,
  targetId: number,
  aKey: string,
  bKey: string,
): Promise<void> {
  const server = await startServerProcess(
    { DATABASE_URL: database.url, ...configuration },
    { keepOutput: false },
  );
  try {
    // A's searches, retried after a 429 as told (or at once with --hammer).
    const aStatuses = new Map<number, number>();
    const aSearchMs: number[] = [];
    const searchAsA = async (until: number) => {
      while (performance.now() < until) {
        const path = `/api/v1/events/?limit=1&search_fields=attributes&search_field_values=${searchValue()}`;
        const started = performance.now();
        const response = await fetch(`${server.baseUrl}${path}`, {
          headers: { 'Service-API-Key': aKey },
        });
        const body = await response.text();
        aStatuses.set(response.status, (aStatuses.get(response.status) ?? 0) + 1);
        // Anything but an answer or a refusal means A's searches no longer measure anything.
        if (response.status !== 200 && response.status !== 429) {
          throw new Error(`A's search got ${response.status}: ${body}`);
        }
        if (response.status !== 429) aSearchMs.push(performance.now() - started);
        else if (!values.hammer) {
          const wait = Number(response.headers.get('retry-after') ?? '1') * 1000;
          await new Promise((resolve) =>
            setTimeout(resolve, Math.max(0, Math.min(wait, until - performance.now()))),
          );
        }
      }
    };

    // B: one worker routes sessions, another lists the agents, each one request at a time, so
    // a slow answer of one kind does not keep the other from being timed.
    const runB = async (runSeconds: number) => {
      const until = performance.now() + runSeconds * 1000;
      const loop = async (request: () => Promise<Response>) => {
        const ms: number[] = [];
        let failures = 0;
        while (performance.now() < until) {
          const answer = await timeOne(request);
          ms.push(answer.ms);
          if (answer.status !== 200) failures += 1;
        }
        return { ms, failures };
      };
      const [routing, agents] = await Promise.all([
        loop(() =>
          fetch(`${server.baseUrl}/api/v1/channels/targets/${targetId}/sessions`, {
            method: 'POST',
            headers: { 'Service-API-Key': bKey, 'Content-Type': 'application/json' },
            body: '{"user_id":"+14155550100"}',
          }),
        ),
        loop(() =>
          fetch(`${server.baseUrl}/api/v1/agents/`, { headers: { 'Service-API-Key': bKey } }),
        ),
      ]);
      return { routing, agents };
    };

    await runB(2); // warm-up: connections, prepared statements
    // The machine is shared with the database server: its load says how much to trust a run.
    const loadBefore = loadavg()[0]!.toFixed(2);
    const idle = await runB(IDLE_SECONDS);
    const aUntil = performance.now() + seconds * 1000;
    const searchers = Promise.all(Array.from({ length: concurrency }, () => searchAsA(aUntil)));
    // B starts once A's searches are under way, and stops with them.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const busy = await runB(seconds - 1);
    await searchers;

    console.log(
      `B alone (${IDLE_SECONDS} s), then beside A (${seconds - 1} s of A's ${seconds} s), one request of each kind at a time:`,
    );
    console.log(HEADER);
    console.log(summary('B routing, alone', idle.routing.ms, idle.routing.failures));
    console.log(summary('B agents list, alone', idle.agents.ms, idle.agents.failures));
    console.log(summary('B routing, beside A', busy.routing.ms, busy.routing.failures));
    console.log(summary('B agents list, beside A', busy.agents.ms, busy.agents.failures));
    console.log(summary("A's searches (not 429)", aSearchMs, 0));
    const byStatus = [...aStatuses.entries()]
      .sort(([x], [y]) => x - y)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    console.log(
      `A's answers (${concurrency} searches in flight, ${values.hammer ? 'a 429 sent again at once' : 'waiting Retry-After after a 429'}): ${byStatus}`,
    );
    const p99 = (samples: readonly number[]) =>
      percentile(
        [...samples].sort((x, y) => x - y),
        99,
      );
    console.log(
      `B's worst p99 beside A: ${Math.max(p99(busy.routing.ms), p99(busy.agents.ms)).toFixed(1)} ms ` +
        `(target < 50 ms); load average ${loadBefore} before, ${loadavg()[0]!.toFixed(2)} after`,
    );
  } finally {
    await server.stop();
  }
}

const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-tenants-'));
const database = await createBenchDatabase(directory, values.database, 'tenants');
try {
  const db = createDb(database.url);
  await migrateDb(db);
  const a = await benchTenant(db, 'Tenant A');
  const b = await benchTenant(db, 'Tenant B');
  const { records } = await loadPlatformRecords(
    db,
    b.organizationId,
    platformRecordsSchema.parse({
      prompts: [
        {
          name: 'p',
          context: 'Answer.',
          llm_config: { model: 'm', provider: 'openai', version: null },
        },
      ],
      agents: Array.from({ length: 20 }, (_, i) => ({
        name: `agent ${i}`,
        prompt: 'p',
        pinned_prompt_version: 1,
      })),
      channels: [
        { name: 'web', kind: 'web_chat', targets: [{ target: 'main', agent: 'agent 0' }] },
      ],
    }),
  );
  const [targetId] = Object.values(loadedIds(records, 'channel_targets'));
  await buildEvents(db, [a.organizationId], events);
  await db.close();

  const kind = database.url.startsWith('postgres') ? 'postgres' : 'sqlite';
  console.log(
    `${kind}, ${events} events of A, DATABASE_POOL_SIZE=${defaults.databasePoolSize}, SQLITE_READER_THREADS=${defaults.sqliteReaderThreads}`,
  );
  const configurations: Array<Record<string, string>> = [
    {
      CONCURRENT_REQUESTS_PER_KEY: perKey,
      CONCURRENT_LIST_READS_PER_KEY: listReads,
      LIST_QUERY_TIMEOUT_MS: listTimeout,
    },
  ];
  if (values['compare-off']) {
    configurations.push({
      CONCURRENT_REQUESTS_PER_KEY: '0',
      CONCURRENT_LIST_READS_PER_KEY: '0',
      LIST_QUERY_TIMEOUT_MS: '0',
    });
  }
  for (let round = 1; round <= rounds; round += 1) {
    for (const configuration of configurations) {
      const label = Object.entries(configuration)
        .map(([name, value]) => `${name}=${value}`)
        .join(', ');
      console.log(`\nround ${round}, ${label}`);
      await measure(configuration, targetId!, a.key, b.key);
      await database.settle();
    }
  }
} finally {
  await database.drop();
  rmSync(directory, { recursive: true, force: true });
}
