// What one organization's slow searches cost another: `pnpm bench tenants [--events 1000000]
// [--seconds 20] [--concurrency 64] [--hammer] [--per-key N] [--list-reads N] [--list-timeout MS]
// [--compare-off] [--rounds 1] [--database postgres://...]`. What the options do: README.md's
// table of commands; --per-key, --list-reads and --list-timeout set CONCURRENT_REQUESTS_PER_KEY,
// CONCURRENT_LIST_READS_PER_KEY and LIST_QUERY_TIMEOUT_MS.

import { loadavg } from 'node:os';
import { loadConfig } from '../../apps/server/src/config.js';
import { buildEvents } from './bench-events.js';
import { benchRoutingTenant, benchTenant } from './bench-tenant.js';
import { options, seeded, sleep, withBenchDatabase, withServer } from './harness.js';
import { Latencies, columns, envText } from './report.js';

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

const row = columns(30, 9, 9, 9, 9, 9);
const HEADER = row('request', 'p50 ms', 'p99 ms', 'max ms', 'requests', 'non-200');

/** A row of the table: p50, p99 and max of the answered (0 without any). */
function summary(label: string, { ms, failures }: { ms: Latencies; failures: number }): string {
  const cell = (p: number) => (ms.percentile(p) || 0).toFixed(1);
  return row(label, cell(50), cell(99), cell(100), ms.count, failures);
}

/**
 * One measurement against a server process with `configuration` added to its environment: B
 * alone, then B beside A's searches; prints the table.
 */
async function measure(
  databaseUrl: string,
  configuration: Record<string, string>,
  { targetId, aKey, bKey }: { targetId: number; aKey: string; bKey: string },
  { seconds, concurrency, hammer }: { seconds: number; concurrency: number; hammer: boolean },
): Promise<void> {
  await withServer(databaseUrl, configuration, async (server) => {
    // A's searches, retried after a 429 as told (or at once with --hammer).
    const aStatuses = new Map<number, number>();
    const aSearches = new Latencies();
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
        if (response.status !== 429) aSearches.add(performance.now() - started);
        else if (!hammer) {
          const wait = Number(response.headers.get('retry-after') ?? '1') * 1000;
          await sleep(Math.min(wait, until - performance.now()));
        }
      }
    };

    // B: one worker routes sessions, another lists the agents, each one request at a time, so
    // a slow answer of one kind does not keep the other from being timed.
    const runB = async (runSeconds: number) => {
      const until = performance.now() + runSeconds * 1000;
      const loop = async (request: () => Promise<Response>) => {
        const ms = new Latencies();
        let failures = 0;
        while (performance.now() < until) {
          const started = performance.now();
          const response = await request();
          await response.arrayBuffer();
          ms.add(performance.now() - started);
          if (response.status !== 200) failures += 1;
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
    await sleep(1000);
    const busy = await runB(seconds - 1);
    await searchers;

    console.log(
      `B alone (${IDLE_SECONDS} s), then beside A (${seconds - 1} s of A's ${seconds} s), one request of each kind at a time:`,
    );
    console.log(HEADER);
    console.log(summary('B routing, alone', idle.routing));
    console.log(summary('B agents list, alone', idle.agents));
    console.log(summary('B routing, beside A', busy.routing));
    console.log(summary('B agents list, beside A', busy.agents));
    console.log(summary("A's searches (not 429)", { ms: aSearches, failures: 0 }));
    const byStatus = [...aStatuses.entries()]
      .sort(([x], [y]) => x - y)
      .map(([status, n]) => `${status}: ${n}`)
      .join(', ');
    console.log(
      `A's answers (${concurrency} searches in flight, ${hammer ? 'a 429 sent again at once' : 'waiting Retry-After after a 429'}): ${byStatus}`,
    );
    const p99 = (shape: { ms: Latencies }) => shape.ms.percentile(99) || 0;
    console.log(
      `B's worst p99 beside A: ${Math.max(p99(busy.routing), p99(busy.agents)).toFixed(1)} ms ` +
        `(target < 50 ms); load average ${loadBefore} before, ${loadavg()[0]!.toFixed(2)} after`,
    );
  });
}

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, {
    events: 1_000_000,
    seconds: 20,
    concurrency: 64,
    hammer: false,
    'per-key': undefined,
    'list-reads': undefined,
    'list-timeout': undefined,
    'compare-off': false,
    rounds: 1,
    database: undefined,
  });
  const { events, seconds, concurrency, hammer } = values;
  const defaults = loadConfig({});
  await withBenchDatabase('tenants', values.database, async (database) => {
    const tenants = await seeded(database.url, async (db) => {
      const a = await benchTenant(db, 'Tenant A');
      const b = await benchRoutingTenant(db, 'Tenant B', { moreAgents: 18 });
      await buildEvents(db, [a.organizationId], events);
      return { targetId: b.targetId, aKey: a.key, bKey: b.key };
    });
    console.log(
      `${database.kind}, ${events} events of A, DATABASE_POOL_SIZE=${defaults.databasePoolSize}, SQLITE_READER_THREADS=${defaults.sqliteReaderThreads}`,
    );
    const configured = {
      CONCURRENT_REQUESTS_PER_KEY: values['per-key'] ?? String(defaults.concurrentRequestsPerKey),
      CONCURRENT_LIST_READS_PER_KEY:
        values['list-reads'] ?? String(defaults.concurrentListReadsPerKey),
      LIST_QUERY_TIMEOUT_MS: values['list-timeout'] ?? String(defaults.listQueryTimeoutMs),
    };
    const off = Object.fromEntries(Object.keys(configured).map((name) => [name, '0']));
    const configurations = values['compare-off'] ? [configured, off] : [configured];
    for (let round = 1; round <= values.rounds; round += 1) {
      for (const configuration of configurations) {
        console.log(`\nround ${round}, ${envText(configuration, ', ')}`);
        await measure(database.url, configuration, tenants, { seconds, concurrency, hammer });
        await database.settle();
      }
    }
  });
}
