// Every shape of query a list accepts, at its depths: `pnpm bench shapes [--resource
// events|prompts|experiments] [--database postgres://...] [--rows N] [--samples 8]
// [--cell-seconds 10]` (`--events N`: `--rows` of events). The rows, the cells and how each is
// asked: docs/benchmarks.md; events come from bench-events.ts, prompts and experiments from
// bench-lists.ts.

import * as enumValues from '../../apps/server/src/generated/enum-values.js';
import {
  ApiError,
  ApiTimeoutError,
  createClient,
  type AgentlineClient,
} from '../../packages/sdk/src/index.js';
import { organizationWithEvents, TOPICS } from './bench-events.js';
import { AGENTS, nth, organizationWithList, toolsFor } from './bench-lists.js';
import { benchRoutingTenant, randomCaller } from './bench-tenant.js';
import { options, withBenchDatabase, withServer, type BenchDatabase } from './harness.js';
import { openLoop } from './open-loop.js';
import { Latencies } from './report.js';
import { search } from './day-queries.js';

const LIMIT = 25;
/** The bar every cell is held to: its p99, and a deep page's p99 over page 0's. */
const MAX_P99_MS = 50;
const MAX_DEPTH_RATIO = 2;
const ROUTED_PER_SECOND = 10;

/** A list query as the SDK takes it: each resource's list checks its own keys. */
type Query = Record<string, unknown>;

/** A cell: the query of its i-th sample (each a different one), at page 0 and deeper. */
interface Cell {
  label: string;
  /** The i-th sample's query, without page or limit. */
  query: (i: number) => Query;
  depths: ReadonlyArray<'middle' | 'last'>;
}

type Pairs = (i: number) => Array<[string, string]>;

/** Each property as order_by, both directions, at page 0, the middle and the last page. */
const orderCells = (properties: readonly string[]): Cell[] =>
  properties.flatMap((property) =>
    (['asc', 'desc'] as const).map((direction) => ({
      label: `order_by ${property} ${direction}`,
      query: () => ({ order_by: property, order_by_direction: direction }),
      depths: ['middle', 'last'] as const,
    })),
  );

/** Each search, at page 0 and the middle. */
const searchCells = (searches: Array<[string, Pairs]>): Cell[] =>
  searches.map(([label, pairs]) => ({
    label: `search ${label}`,
    query: (i: number) => search(pairs(i)),
    depths: ['middle'] as const,
  }));

const month = (i: number) => `2026-${String((i % 12) + 1).padStart(2, '0')}`;
const day = (i: number) => new Date(Date.parse('2026-02-01T00:00:00Z') + i * 86_400_000 * 9);
const dayWindow = (i: number) => ({
  start_datetime: day(i).toISOString(),
  end_datetime: new Date(day(i).getTime() + 86_400_000).toISOString(),
});

function eventCells(organizationId: number, eventCount: number): Cell[] {
  // The generated events' identifiers (bench-events.ts): sessions s-<seed>-N, the seed being the
  // organization's id, ten events each.
  const seed = organizationId;
  const sessions = Math.floor(eventCount / 10);
  const searches: Array<[string, Pairs]> = [
    ['timestamp "2026-MM"', (i) => [['timestamp', month(i)]]],
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
  return [
    ...orderCells(enumValues.EventProperties),
    ...searchCells(searches),
    { label: 'window of one day', query: dayWindow, depths: ['middle'] },
    {
      label: 'window + order_by user_id',
      query: (i) => ({ order_by: 'user_id', ...dayWindow(i) }),
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

type Tenant = Awaited<ReturnType<typeof benchRoutingTenant>>;

/** Prompts of bench-lists.ts: ids after the tenant's own AGENTS - 1, names and texts by index. */
function promptCells(_tenant: Tenant, count: number): Cell[] {
  const index = (i: number) => (i * 7919) % count;
  const searches: Array<[string, Pairs]> = [
    ['id', (i) => [['id', String(AGENTS + index(i))]]],
    ['name word', (i) => [['name', nth(TOPICS, i)]]],
    ['name rare number', (i) => [['name', `assistant ${index(i)}`]]],
    ['name_exact', (i) => [['name_exact', `${nth(TOPICS, index(i) * 3)} assistant ${index(i)}`]]],
    ['description word', (i) => [['description', nth(TOPICS, i)]]],
    ['description rare number', (i) => [['description', `#${index(i) + 4242}`]]],
    ['name_description', (i) => [['name_description', nth(TOPICS, i)]]],
    ['context', (i) => [['context', `Case ${index(i)}.`]]],
    ['tools', (i) => [['tools', `_tool_${index(i) % toolsFor(count)}`]]],
    ['llm_config', (i) => [['llm_config', nth(['"small"', '"large"', '"fast"'], i)]]],
    ['last_updated "2026-MM"', (i) => [['last_updated', month(i)]]],
    ['last_updated_by', (i) => [['last_updated_by', `editor${i % 50}@`]]],
    ['agent_count', (i) => [['agent_count', String(i % 4)]]],
    ['session_end_enabled', (i) => [['session_end_enabled', nth(['true', 'false'], i)]]],
    [
      'tools + tools',
      (i) => [
        ['tools', '_tool_'],
        ['tools', `_tool_${index(i) % toolsFor(count)}`],
      ],
    ],
  ];
  return [...orderCells(enumValues.PromptProperties), ...searchCells(searches)];
}

/** Experiments of bench-lists.ts: names and texts by index, over the tenant's agents and targets. */
function experimentCells(tenant: Tenant, count: number): Cell[] {
  const index = (i: number) => (i * 7919) % count;
  const agentIds = Object.values(tenant.agentIds);
  const searches: Array<[string, Pairs]> = [
    ['id', (i) => [['id', String(index(i) + 1)]]],
    ['name word', (i) => [['name', nth(TOPICS, i)]]],
    ['name rare number', (i) => [['name', `test ${index(i)}`]]],
    ['name_exact', (i) => [['name_exact', `${nth(TOPICS, index(i) * 3)} test ${index(i)}`]]],
    ['description word', (i) => [['description', nth(TOPICS, i)]]],
    ['status', (i) => [['status', nth(['draft', 'stopped', 'running'], i)]]],
    ['target_id', (i) => [['target_id', String(nth(tenant.targetIds, i))]]],
    ['agent_id', (i) => [['agent_id', String(nth(agentIds, i))]]],
    ...(['created_at', 'updated_at', 'started_at', 'stopped_at'] as const).map(
      (field): [string, Pairs] => [`${field} "2026-MM"`, (i) => [[field, month(i)]]],
    ),
    [
      'agent_id + agent_id',
      (i) => [
        ['agent_id', String(nth(agentIds, i))],
        ['agent_id', String(nth(agentIds, i + 1))],
      ],
    ],
    [
      'status + name',
      (i) => [
        ['status', 'stopped'],
        ['name', nth(TOPICS, i)],
      ],
    ],
  ];
  return [
    ...orderCells(enumValues.ExperimentProperties),
    ...searchCells(searches),
    { label: 'window of one day', query: dayWindow, depths: ['middle'] },
    {
      label: 'window + order_by name',
      query: (i) => ({ order_by: 'name', ...dayWindow(i) }),
      depths: ['middle'],
    },
  ];
}

type List = (client: AgentlineClient, query: Query) => Promise<{ total_count?: number | null }>;

/** What the shapes of a list need: its rows in a new organization and its cells. */
interface Resource {
  rows: number;
  build: (database: BenchDatabase, rows: number) => Promise<Tenant>;
  cells: (tenant: Tenant, rows: number) => Cell[];
  /** The order of the server's first answers (its connections, the count), not a cell's. */
  warmUpOrder: string;
}

/** A list that bench-lists.ts seeds. */
const seededList = (name: 'prompts' | 'experiments', cells: Resource['cells']): Resource => ({
  rows: 100_000,
  build: (database, rows) => organizationWithList(database, name, rows),
  cells,
  warmUpOrder: 'name',
});

const RESOURCES = {
  events: {
    rows: 1_000_000,
    build: (database, rows) =>
      organizationWithEvents(database, rows, (db) => benchRoutingTenant(db, 'Bench')),
    cells: (tenant, rows) => eventCells(tenant.organizationId, rows),
    warmUpOrder: 'user_id',
  } satisfies Resource,
  prompts: seededList('prompts', promptCells),
  experiments: seededList('experiments', experimentCells),
};

/** One page, timed as the customer sees it; a query_timeout 422 or no answer is a result. */
async function ask(client: AgentlineClient, list: List, query: Query) {
  const started = performance.now();
  try {
    const answer = await list(client, query);
    return { ms: performance.now() - started, total: answer.total_count ?? 0, timedOut: false };
  } catch (error) {
    if (error instanceof ApiTimeoutError || (error instanceof ApiError && error.status === 422)) {
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
  list: List,
  cell: Cell,
  samples: number,
  cellMs: number,
): Promise<Row[]> {
  /** Up to `count` samples, `query(i)` the i-th, stopping after cellMs once it has two. */
  const sampled = async (depth: string, count: number, query: (i: number) => Query) => {
    const row: Row = { cell: cell.label, depth, times: new Latencies(), timeouts: 0, ratio: null };
    const totals: number[] = [];
    const started = performance.now();
    for (let i = 0; i < count && (i < 2 || performance.now() - started < cellMs); i += 1) {
      const asked = await ask(client, list, { ...cell.query(i), ...query(i) });
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
    resource: 'events',
    rows: undefined,
    events: undefined,
    samples: 8,
    'cell-seconds': 10,
    database: undefined,
  });
  const name = values.resource;
  if (!Object.hasOwn(RESOURCES, name)) {
    throw new Error(`--resource takes ${Object.keys(RESOURCES).join(', ')}`);
  }
  const resource = RESOURCES[name as keyof typeof RESOURCES];
  const list: List = (client, query) => client[name as keyof typeof RESOURCES].list(query);
  const rowCount = Number(values.rows ?? values.events ?? resource.rows);
  const { samples } = values;
  const cellMs = values['cell-seconds'] * 1000;
  if (!Number.isInteger(samples) || samples < 2) throw new Error('--samples takes 2 or more');
  await withBenchDatabase('shapes', values.database, async (database) => {
    const tenant = await resource.build(database, rowCount);
    await database.settle();
    await withServer(database.url, {}, async (server) => {
      const client = createClient({ apiKey: tenant.key, baseUrl: server.baseUrl });
      const routing = new Latencies();
      let routingTimeouts = 0;
      let measuring = true;
      const routed = openLoop({
        untilMs: Number.POSITIVE_INFINITY,
        firstGapMs: 0,
        gapMs: () => (measuring ? 1000 / ROUTED_PER_SECOND : Number.POSITIVE_INFINITY),
        maxInFlight: 4,
        work: async (dueAt) => {
          // A list that holds SQLite's one connection for a minute times a session out.
          const routedIn = await client.sessions
            .route(tenant.targetId, { user_id: randomCaller() })
            .then(
              () => performance.now() - dueAt,
              (error: unknown) => {
                if (error instanceof ApiTimeoutError) return null;
                throw error;
              },
            );
          if (routedIn === null) routingTimeouts += 1;
          else routing.add(routedIn);
        },
      });
      for (const query of [{ limit: 0 }, { limit: 1, order_by: resource.warmUpOrder }]) {
        await list(client, query);
      }
      console.log(
        `\npages of ${LIMIT} on ${database.kind}: ${rowCount} ${values.resource} of one organization, ` +
          `${samples} different queries per cell (at most ${cellMs / 1000} s a cell), one at a time, ` +
          `beside ${ROUTED_PER_SECOND} routed sessions/s`,
      );
      console.log('| cell | depth | samples | p50 ms | p99 ms | deep p99 / page 0 p99 | flags |');
      console.log('|---|---|---|---|---|---|---|');
      const flagged: string[] = [];
      const runStarted = performance.now();
      for (const cell of resource.cells(tenant, rowCount)) {
        for (const row of await measureCell(client, list, cell, samples, cellMs)) {
          printRow(row, flagged);
        }
      }
      measuring = false;
      await routed;
      console.log(
        `\nrouting beside it: ${routing.count} sessions (${routingTimeouts} timed out), p50 ${routing.percentile(50).toFixed(1)} ms, ` +
          `p99 ${routing.percentile(99).toFixed(1)} ms; cells asked in ${((performance.now() - runStarted) / 1000).toFixed(0)} s`,
      );
      console.log(
        `shapes: ${flagged.length} rows over ${MAX_P99_MS} ms p99 or ${MAX_DEPTH_RATIO}x page 0${flagged.length > 0 ? `: ${flagged.join('; ')}` : ''}`,
      );
    });
  });
}
