// The dashboard's list queries for the day benchmark (day.ts): what people clicking through the
// events, prompts, experiments and agents pages ask, drawn at random so that few requests repeat
// one another (a repeated URL would measure the server's kept answers, not its queries). The same
// draw serves the open-loop dashboards (through the SDK) and the closed-loop run (as URLs).

import type {
  AgentListQuery,
  AgentlineClient,
  EventListQuery,
  ExperimentListQuery,
  PromptListQuery,
} from '../../packages/sdk/src/index.js';
import { TOPICS } from './bench-events.js';

export const LIST_RESOURCES = ['events', 'prompts', 'experiments', 'agents'] as const;
export type ListResource = (typeof LIST_RESOURCES)[number];

export type ListQuery =
  | { resource: 'events'; query: EventListQuery }
  | { resource: 'prompts'; query: PromptListQuery }
  | { resource: 'experiments'; query: ExperimentListQuery }
  | { resource: 'agents'; query: AgentListQuery };

const pick = <T>(choices: readonly T[]): T => choices[Math.floor(Math.random() * choices.length)]!;
const chance = (p: number) => Math.random() < p;
const below = (n: number) => Math.floor(Math.random() * n);

const EVENT_ORDERS = ['timestamp', 'session_id', 'user_id', 'category', 'type'] as const;
const LIMITS = [10, 25, 25, 25, 50, 100];
const DAY_MS = 86_400_000;
/** The generated events' year (bench-events.ts). */
const YEAR_START = Date.parse('2026-01-01T00:00:00.000Z');

type EventSearch = [NonNullable<EventListQuery['search_fields']>[number], string];

/** Searches of the generated events (bench-events.ts) of the organization seeded `seed`. */
const EVENT_SEARCHES: Array<(seed: number) => EventSearch> = [
  (seed) => ['session_id', `s-${seed}-${below(1000)}`],
  (seed) => ['conversation_id', `c-${seed}-${below(500)}`],
  () => ['user_id', `+1415555${String(below(20_000)).padStart(4, '0')}`],
  () => ['category', pick(['session', 'llm', 'tool', 'message', 'error', 'ess', 'too'])],
  () => ['type', pick(['tool-', 'completion', 'session-started', 'timeout', 'message-s'])],
  () => ['description', pick(TOPICS)],
  () => ['description', `#${below(100_000)}`],
];

/** A window of a day, a week or a month somewhere in the events' year, or the last hour. */
function timeWindow(): Pick<EventListQuery, 'start_datetime' | 'end_datetime'> {
  if (chance(0.25)) {
    return { start_datetime: new Date(Date.now() - 3_600_000).toISOString() };
  }
  const length = pick([1, 7, 30]) * DAY_MS;
  const start = YEAR_START + below(365 - 30) * DAY_MS;
  return {
    start_datetime: new Date(start).toISOString(),
    end_datetime: new Date(start + length).toISOString(),
  };
}

/** The usual list knobs: a page size, sometimes a later page, sometimes another order. */
function paging<P extends string>(orders: readonly P[]) {
  return {
    limit: pick(LIMITS),
    ...(chance(0.3) ? { page: below(chance(0.2) ? 200 : 5) } : {}),
    ...(chance(0.5)
      ? { order_by: pick(orders), order_by_direction: pick(['asc', 'desc'] as const) }
      : {}),
  };
}

/** A search of each field for its value, as a list query gives it. */
export const search = (pairs: ReadonlyArray<readonly [string, string]>) => ({
  search_fields: pairs.map(([field]) => field),
  search_field_values: pairs.map(([, value]) => value),
});

/** The other lists' orders, and the field a search of them names with its values. */
const OTHER_LISTS = {
  prompts: {
    orders: ['id', 'name', 'last_updated', 'agent_count'],
    search: ['name_description', ['prompt', '1', 'p']],
  },
  experiments: {
    orders: ['id', 'name', 'status', 'created_at', 'started_at'],
    search: ['status', ['draft', 'running', 'stopped']],
  },
  agents: { orders: ['id', 'name', 'prompt_id'], search: ['name', ['agent', 'a', '1', 'agent 2']] },
} as const;

/** Half of the queries are events pages, the rest the other lists, as a dashboard's day goes. */
export function randomListQuery(seed: number): ListQuery {
  const kind = below(6);
  if (kind < 3) {
    const searches = Array.from({ length: chance(0.6) ? 1 + below(2) : 0 }, () =>
      pick(EVENT_SEARCHES)(seed),
    );
    return {
      resource: 'events',
      query: {
        ...paging(EVENT_ORDERS),
        ...(searches.length > 0 ? search(searches) : {}),
        ...(chance(0.4) ? timeWindow() : {}),
      },
    } as ListQuery;
  }
  const resource = (['prompts', 'experiments', 'agents'] as const)[kind - 3]!;
  const {
    orders,
    search: [field, values],
  } = OTHER_LISTS[resource];
  return {
    resource,
    query: { ...paging(orders), ...(chance(0.4) ? search([[field, pick(values)]]) : {}) },
  } as ListQuery;
}

/** The query as the SDK sends it (arrays as repeated parameters). */
export function listPath({ resource, query }: ListQuery): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  return `/api/v1/${resource}/?${search.toString()}`;
}

/** The query through the SDK's list method, as a dashboard built on the SDK asks it. */
export function listWithSdk(
  client: AgentlineClient,
  list: ListQuery,
  signal: AbortSignal,
): Promise<unknown> {
  // ListQuery pairs each resource with its own query type, which the union of methods cannot see.
  return client[list.resource].list(list.query as never, { signal });
}
