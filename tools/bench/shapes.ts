// Every shape of query the events list accepts, at its depths: `pnpm bench shapes [--database
// postgres://...] [--events 1000000] [--samples 8] [--cell-seconds 10]`.
//
// `--events` generated events in one organization (bench-events.ts); while it routes 10 sessions/s
// through the SDK (each writes events, so every answer is read at a new version), each cell is
// asked `--samples` times, one request at a time, never the same URL twice. Cells: each property
// as order_by, both directions, at page 0, the middle and the last page; each search field, a
// window, search pairs, an order with a search, at page 0 and the middle. A cell stops after
// `--cell-seconds` (two samples at least); a 422 query_timeout counts as the time it took.

import { EVENT_PROPERTIES } from '../../apps/server/src/vocabulary/events.js';
import {
  ApiError,
  createClient,
  type AgentlineClient,
  type EventListQuery,
} from '../../packages/sdk/src/index.js';
import { organizationWithEvents, TOPICS } from './bench-events.js';
import { benchRoutingTenant, randomCaller } from './bench-tenant.js';
import { options, withBenchDatabase, withServer } from './harness.js';
import { openLoop, steadyGapsMs } from './open-loop.js';
import { Latencies } from './report.js';

const LIMIT = 25;
/** The bar every cell is held to: its p99, and a deep page's p99 over page 0's. */
const MAX_P99_MS = 50;
const MAX_DEPTH_RATIO = 2;
const ROUTED_PER_SECOND = 10;

/** A cell: the query of its i-th sample (each a different one), at page 0 and deeper. */
interface Cell {
  label: string;
  /** The i-th sample's query, without page or limit. */
  query: (i: number) => EventListQuery;
  depths: ReadonlyArray<'middle' | 'last'>;
}

const search = (pairs: Array<[string, string]>): EventListQuery => ({
  search_fields: pairs.map(([field]) => field) as EventListQuery['search_fields'],
  search_field_values: pairs.map(([, value]) => value),
});

/** The i-th of a list of values, round and round: each sample takes the next. */
const nth = <T>(list: readonly T[], i: number): T => list[i % list.length]!;

function cells(organizationId: number, eventCount: number): Cell[] {
  // The generated events' identifiers (bench-events.ts): sessions s-<seed>-N, the seed being the
  // organization's id, ten events each.
  const seed = organizationId;
  const sessions = Math.floor(eventCount / 10);
  const orders: Cell[] = EVENT_PROPERTIES.flatMap((property) =>
    (['asc', 'desc'] as const).map((direction) => ({
      label: `order_by ${property} ${direction}`,
      query: () => ({ order_by: property, order_by_direction: direction }),
      depths: ['middle', 'last'] as const,
    })),
  );
  const searches: Array<[string, (i: number) => Array<[string, string]>]> = [
    [
      'timestamp "2026-MM"',
      (i) => [['timestamp', `2026-${String((i % 12) + 1).padStart(2, '0')}`]],
    ],
    ['session_id', (i) => [['session_id', `s-${seed}-${(i * 7919) % sessions}`]]],
    ['conversation_id', (i) => [['conversation_id', `c-${seed}-${(i * 7919) % (sessions / 2)}`]]],
    ['source substring', (i) => [['source', nth(['router', 'tool', 'rout', 'oute', 'ool'], i)]]],
    ['source_id', (i) => [['source_id', String((i * 7) % 50)]]],
    ['category substring', (i) => [['category', nth(['tool', 'llm', 'ess', 'error', 'sys'], i)]]],
    ['type substring', (i) => [['type', nth(['tool-call', 'completion', 'session-', 'mess'], i)]]],
    ['user_id', (i) => [['user_id', `+1415555${String((i * 1237) % 20_000).padStart(4, '0')}`]]],
    ['description word', (i) => [['description', nth(TOPICS, i)]]],
    ['description rare number', (i) => [['description', `#${4242 + i * 1111}`]]],
    ['attributes substring', (i) => [['attributes', `"agent_id":${i % 40},`]]],
    [
      'category + description',
      (i) => [
        ['category', nth(['tool', 'llm', 'message'], i)],
        ['description', nth(TOPICS, i)],
      ],
    ],
    [
      'type + user_id',
      (i) => [
        ['type', nth(['tool-call', 'completion', 'message-sent'], i)],
        ['user_id', `+1415555${String((i * 389) % 20_000).padStart(4, '0')}`],
      ],
    ],
    [
      'source + attributes',
      (i) => [
        ['source', nth(['tool', 'router'], i)],
        ['attributes', `"agent_id":${(i * 3) % 40},`],
      ],
    ],
  ];
  const day = (i: number) => new Date(Date.parse('2026-02-01T00:00:00Z') + i * 86_400_000 * 9);
  return [
    ...orders,
    ...searches.map(([label, pairs]) => ({
      label: `search ${label}`,
      query: (i: number) => search(pairs(i)),
      depths: ['middle'] as const,
    })),
    {
      label: 'window of one day',
      query: (i) => ({
        start_datetime: day(i).toISOString(),
        end_datetime: new Date(day(i).getTime() + 86_400_000).toISOString(),
      }),
      depths: ['middle'],
    },
    {
      label: 'window + order_by user_id',
      query: (i) => ({
        order_by: 'user_id',
        start_datetime: day(i).toISOString(),
        end_datetime: new Date(day(i).getTime() + 86_400_000).toISOString(),
      }),
      depths: ['middle'],
    },
    {
      label: 'category + order_by source desc',
      query: (i) => ({
        ...search([['category', nth(['tool', 'llm', 'message'], i)]]),
        order_by: 'source',
        order_by_direction: 'desc',
      }),
      depths: ['middle'],
    },
  ];
}

/** One page, timed as the customer sees it; a query_timeout 422 is a result, not a failure. */
async function ask(client: AgentlineClient, query: EventListQuery) {
  const started = performance.now();
  try {
    const answer = await client.events.list(query);
    return { ms: performance.now() - started, total: answer.total_count ?? 0, timedOut: false };
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) {
      return { ms: performance.now() - started, total: 0, timedOut: true };
    }
    throw error;
  }
}

interface Row {
  cell: string;
  depth: string;
  times: Latencies;
  timeouts: number;
  ratio: number | null;
}

/** The cell's samples at page 0 (each a different limit), then at each depth of its matches. */
async function measureCell(
  client: AgentlineClient,
  cell: Cell,
  samples: number,
  cellMs: number,
): Promise<Row[]> {
  /** Up to `count` samples, `query(i)` the i-th, stopping after cellMs once it has two. */
  const sampled = async (depth: string, count: number, query: (i: number) => EventListQuery) => {
    const row: Row = { cell: cell.label, depth, times: new Latencies(), timeouts: 0, ratio: null };
    const totals: number[] = [];
    const started = performance.now();
    for (let i = 0; i < count && (i < 2 || performance.now() - started < cellMs); i += 1) {
      const asked = await ask(client, { ...cell.query(i), ...query(i) });
      row.times.add(asked.ms);
      row.timeouts += asked.timedOut ? 1 : 0;
      totals.push(asked.total);
    }
    return { row, totals };
  };
  // Limits 25, 26, ...: the same first page is never asked twice.
  const first = await sampled('page 0', samples, (i) => ({ limit: LIMIT + i }));
  const rows = [first.row];
  for (const depth of cell.depths) {
    const { row } = await sampled(depth, first.totals.length, (i) => {
      const lastPage = Math.max(0, Math.ceil(first.totals[i]! / LIMIT) - 1);
      // Neighbouring pages, so no two samples ask the same one (and none page 0's).
      const page = depth === 'last' ? lastPage - i : Math.floor(lastPage / 2) + i;
      return { limit: LIMIT, page: Math.max(1, page) };
    });
    row.ratio = row.times.percentile(99) / first.row.times.percentile(99);
    rows.push(row);
  }
  return rows;
}

function printRow(row: Row, flagged: string[]): void {
  const p99 = row.times.percentile(99);
  const flags = [
    p99 > MAX_P99_MS ? `p99>${MAX_P99_MS}` : '',
    row.ratio !== null && row.ratio > MAX_DEPTH_RATIO ? `>${MAX_DEPTH_RATIO}x` : '',
    row.timeouts > 0 ? `${row.timeouts} timeout(s)` : '',
  ].filter(Boolean);
  if (flags.length > 0) flagged.push(`${row.cell} (${row.depth})`);
  console.log(
    `| ${row.cell} | ${row.depth} | ${row.times.count} | ${row.times.percentile(50).toFixed(1)} | ${p99.toFixed(1)} | ${row.ratio === null ? '' : row.ratio.toFixed(2)} | ${flags.join(', ')} |`,
  );
}

export async function run(args: readonly string[]): Promise<void> {
  const values = options(args, {
    events: '1000000',
    samples: '8',
    'cell-seconds': '10',
    database: undefined,
  });
  const eventCount = Number(values.events);
  const samples = Number(values.samples);
  const cellMs = Number(values['cell-seconds']) * 1000;
  if (!Number.isInteger(samples) || samples < 2) throw new Error('--samples takes 2 or more');
  await withBenchDatabase('shapes', values.database, async (database) => {
    const tenant = await organizationWithEvents(database, eventCount, (db) =>
      benchRoutingTenant(db, 'Bench'),
    );
    await withServer(database.url, {}, async (server) => {
      const client = createClient({ apiKey: tenant.key, baseUrl: server.baseUrl });
      const router = createClient({ apiKey: tenant.key, baseUrl: server.baseUrl });
      const routing = new Latencies();
      let measuring = true;
      const routed = openLoop({
        untilMs: Number.POSITIVE_INFINITY,
        firstGapMs: 0,
        gapMs: () =>
          measuring ? steadyGapsMs(1000 / ROUTED_PER_SECOND)() : Number.POSITIVE_INFINITY,
        maxInFlight: 4,
        work: async (dueAt) => {
          await router.sessions.route(tenant.targetId, { user_id: randomCaller() });
          routing.add(performance.now() - dueAt);
        },
      });
      // The server's first answers (its connections, the organization's count) are not a cell's.
      await client.events.list({ limit: 0 });
      await client.events.list({ limit: 1, order_by: 'user_id' });
      console.log(
        `\npages of ${LIMIT} on ${database.kind}: ${eventCount} events of one organization, ` +
          `${samples} different queries per cell (at most ${cellMs / 1000} s a cell), one at a time, ` +
          `beside ${ROUTED_PER_SECOND} routed sessions/s`,
      );
      console.log('| cell | depth | samples | p50 ms | p99 ms | deep p99 / page 0 p99 | flags |');
      console.log('|---|---|---|---|---|---|---|');
      const flagged: string[] = [];
      const runStarted = performance.now();
      for (const cell of cells(tenant.organizationId, eventCount)) {
        for (const row of await measureCell(client, cell, samples, cellMs)) printRow(row, flagged);
      }
      measuring = false;
      await routed;
      console.log(
        `\nrouting beside it: ${routing.count} sessions, p50 ${routing.percentile(50).toFixed(1)} ms, ` +
          `p99 ${routing.percentile(99).toFixed(1)} ms; cells asked in ${((performance.now() - runStarted) / 1000).toFixed(0)} s`,
      );
      console.log(
        `shapes: ${flagged.length} rows over ${MAX_P99_MS} ms p99 or ${MAX_DEPTH_RATIO}x page 0${flagged.length > 0 ? `: ${flagged.join('; ')}` : ''}`,
      );
    });
  });
}
