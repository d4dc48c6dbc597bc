// The customers of the day benchmark (day.ts), all through the SDK with its defaults (its retries
// of 429 and 5xx included): per organization, a router routing sessions, a dashboard loading
// lists in bursts, an export walking events with iterate(), and two live streams. Every answer on
// the wire is counted by status (a fetch that only looks), so refusals the SDK retried still show.

import {
  createClient,
  RateLimitError,
  type AgentlineClient,
  type EventListQuery,
  type EventStreamQuery,
} from '../../packages/sdk/src/index.js';
import type { DayTenant } from './day-tenants.js';
import { LIST_RESOURCES, listWithSdk, randomListQuery, type ListResource } from './day-queries.js';
import { randomCaller } from './bench-tenant.js';
import { openLoop, poissonGapsMs } from './open-loop.js';
import { Latencies } from './report.js';

/** Every answer the clients received, by status, and the requests that got none. */
export class WireTally {
  readonly byStatus = new Map<number, number>();
  networkErrors = 0;
  /** The network errors by their cause's code (ECONNRESET, UND_ERR_SOCKET...). */
  readonly networkCauses = new Map<string, number>();
  /** How long the requests that got no answer had waited: a stale socket fails at once. */
  readonly networkErrorAfter = new Latencies();
  /** Set once the run is over: requests cut off then are not the server's failures. */
  over = false;

  readonly fetch: typeof globalThis.fetch = async (input, init) => {
    const started = performance.now();
    try {
      const response = await globalThis.fetch(input, init);
      this.byStatus.set(response.status, (this.byStatus.get(response.status) ?? 0) + 1);
      return response;
    } catch (error) {
      if (!this.over) {
        this.networkErrors += 1;
        this.networkErrorAfter.add(performance.now() - started);
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
        this.networkCauses.set(cause, (this.networkCauses.get(cause) ?? 0) + 1);
      }
      throw error;
    }
  };

  count(test: (status: number) => boolean): number {
    let total = 0;
    for (const [status, n] of this.byStatus) if (test(status)) total += n;
    return total;
  }
}

/** What one kind of request got: latencies of the answered, and how the others ended. */
export class ShapeTally {
  readonly latencies = new Latencies();
  /** The same latencies by the minute of the day their call fell due in (from `dayStart`). */
  readonly byMinute: Latencies[] = [];
  /** Calls that still failed with 429 after the SDK's retries. */
  refused = 0;
  failed = 0;
  /** Calls cut off by the end of the run. */
  cut = 0;
  readonly firstFailures: string[] = [];

  constructor(private readonly dayStart: number) {}

  async time<T>(
    dueAt: number,
    signal: AbortSignal,
    call: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      const answer = await call();
      const ms = performance.now() - dueAt;
      this.latencies.add(ms);
      const minute = Math.max(0, Math.floor((dueAt - this.dayStart) / 60_000));
      (this.byMinute[minute] ??= new Latencies()).add(ms);
      return answer;
    } catch (error) {
      if (signal.aborted) this.cut += 1;
      else if (error instanceof RateLimitError) this.refused += 1;
      else {
        this.failed += 1;
        if (this.firstFailures.length < 3) this.firstFailures.push(String(error));
      }
      return undefined;
    }
  }
}

/** The default per-organization rates, which `--rate` multiplies. */
const ROUTING_PER_SECOND = 10;
const ROUTING_IN_FLIGHT = 32;
const DASHBOARD_BURST = 16;
const DASHBOARD_EVERY_MS = 5_000;
const WALK_EVERY_MS = 60_000;

/** The tallies of a day that starts at `dayStart` (performance.now()). */
export function newTallies(dayStart: number) {
  const lists = Object.fromEntries(
    LIST_RESOURCES.map((resource) => [resource, new ShapeTally(dayStart)]),
  ) as Record<ListResource, ShapeTally>;
  return {
    wire: new WireTally(),
    routing: new ShapeTally(dayStart),
    lists,
    walks: new ShapeTally(dayStart),
    walkedEvents: 0,
    /** Commit (the event's timestamp) to arrival of routed sessions' events on the streams. */
    delivery: new Latencies(),
    /** Events the streams received that routing did not write (the import's). */
    streamedOthers: 0,
    /** Arrivals dropped because the router had its most sessions in flight. */
    droppedSessions: 0,
    /** Dashboard bursts dropped because four were still loading. */
    droppedBursts: 0,
    /** Streams that ended with an error the SDK gave up on. */
    streamFailures: [] as string[],
    /** What each stream should have delivered of the routed sessions, and did. */
    streams: new StreamLedger(),
    /** Sessions the planned experiment routed with a created_at at or after its end_at. */
    routedAfterEnd: 0,
  };
}

export type DayTallies = ReturnType<typeof newTallies>;

/** The day's kinds of request, each with its label in the report. */
export const shapesOf = (tallies: DayTallies): Array<[string, ShapeTally]> => [
  ['routing', tallies.routing],
  ...Object.entries(tallies.lists).map(([resource, shape]): [string, ShapeTally] => [
    `list ${resource}`,
    shape,
  ]),
  ['iterate walk (whole)', tallies.walks],
];

export interface DayPlan {
  baseUrls: readonly string[];
  rate: number;
  /** performance.now() at which arrivals stop. */
  untilMs: number;
  /** Aborts every call still in progress (the run's hard end). */
  signal: AbortSignal;
  /** Ends the streams. */
  streamSignal: AbortSignal;
  planned: { id: number; endAt: number };
  /** The parts of the day that run; all of them when absent. */
  parts?: ReadonlySet<DayPart>;
}

/** The customers of a day, each of which can run alone (to cost it). */
export type DayPart = 'routing' | 'lists' | 'walks' | 'streams';

/** The organization's sessions log: what the export walks and one of the streams follows. */
const SESSIONS_LOG: EventListQuery & EventStreamQuery = {
  search_fields: ['type'],
  search_field_values: ['session-started'],
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One client per server process for `key`, and the next of them in turn. */
function roundRobin(key: string, plan: DayPlan, tallies: DayTallies): () => AgentlineClient {
  const clients = plan.baseUrls.map((baseUrl) =>
    createClient({ apiKey: key, baseUrl, fetch: tallies.wire.fetch }),
  );
  let turn = 0;
  return () => clients[turn++ % clients.length]!;
}

/** A tenant's day: resolves when its loops have stopped and its streams closed. */
export async function tenantDay(
  tenant: DayTenant,
  plan: DayPlan,
  tallies: DayTallies,
): Promise<void> {
  const { signal, untilMs, rate } = plan;
  const runs = (part: DayPart) => plan.parts?.has(part) ?? true;
  const router = roundRobin(tenant.routerKey, plan, tallies);
  const dashboard = roundRobin(tenant.dashboardKey, plan, tallies);
  const routingGaps = poissonGapsMs(ROUTING_PER_SECOND * rate);
  const idle = { started: 0, dropped: 0 };
  const routing = !runs('routing')
    ? idle
    : openLoop({
        untilMs,
        firstGapMs: routingGaps(),
        gapMs: routingGaps,
        maxInFlight: ROUTING_IN_FLIGHT,
        work: async (dueAt) => {
          const userId = randomCaller();
          const sentAt = performance.now();
          const session = await tallies.routing.time(dueAt, signal, () =>
            router().sessions.route(tenant.targetId, { user_id: userId }, { signal }),
          );
          if (session) tallies.streams.routed(tenant.name, session.session_id, sentAt);
          if (
            session?.experiment_id === plan.planned.id &&
            Date.parse(session.created_at) >= plan.planned.endAt
          ) {
            tallies.routedAfterEnd += 1;
          }
        },
      });
  const dashboards = !runs('lists')
    ? idle
    : onSchedule(plan, DASHBOARD_EVERY_MS, 4, (dueAt) =>
        Promise.all(
          Array.from({ length: DASHBOARD_BURST }, async () => {
            const list = randomListQuery(tenant.organizationId);
            await tallies.lists[list.resource].time(dueAt, signal, () =>
              listWithSdk(dashboard(), list, signal),
            );
          }),
        ),
      );
  const walks = !runs('walks')
    ? idle
    : onSchedule(plan, WALK_EVERY_MS, 1, (dueAt) =>
        tallies.walks.time(dueAt, signal, async () => {
          const pages = { ...SESSIONS_LOG, limit: 1000 };
          for await (const _event of dashboard().events.iterate(pages, { signal })) {
            tallies.walkedEvents += 1;
          }
        }),
      );
  const [routed, bursts] = await Promise.all([
    routing,
    dashboards,
    walks,
    runs('streams') && follow(tenant, plan, tallies, 0, SESSIONS_LOG),
    runs('streams') && follow(tenant, plan, tallies, 1, {}),
  ]);
  tallies.droppedSessions += routed.dropped;
  tallies.droppedBursts += bursts.dropped;
}

/** `work` every `everyMs` (divided by the plan's rate), first at a random point of one period. */
function onSchedule(
  plan: DayPlan,
  everyMs: number,
  maxInFlight: number,
  work: (dueAt: number) => Promise<unknown>,
) {
  const periodMs = everyMs / plan.rate;
  return openLoop({
    untilMs: plan.untilMs,
    firstGapMs: Math.random() * periodMs,
    gapMs: () => periodMs,
    maxInFlight,
    work,
  });
}

/** A live stream of the tenant's events on server process `process`, until the streams end. */
async function follow(
  tenant: DayTenant,
  plan: DayPlan,
  tallies: DayTallies,
  process: number,
  query: EventStreamQuery,
): Promise<void> {
  const record = tallies.streams.open(tenant.name);
  const client = createClient({
    apiKey: tenant.dashboardKey,
    baseUrl: plan.baseUrls[process % plan.baseUrls.length],
    fetch: async (input, init) => {
      const response = await tallies.wire.fetch(input, init);
      if (response.ok) record.openedAt ??= performance.now();
      return response;
    },
  });
  try {
    for await (const event of client.events.stream(query, { signal: plan.streamSignal })) {
      // Sessions routed today have UUIDs; the import's session-started events (s-7-...) are a
      // year old and say nothing of delivery.
      if (event.type === 'session-started' && UUID.test(event.session_id ?? '')) {
        tallies.delivery.add(Date.now() - Date.parse(event.timestamp));
        if (record.received.has(event.session_id!)) record.repeated += 1;
        else record.received.add(event.session_id!);
      } else {
        tallies.streamedOthers += 1;
      }
    }
  } catch (error) {
    if (!plan.streamSignal.aborted) tallies.streamFailures.push(String(error));
  }
}

/** One stream of `organization`, in the ledger below. */
const newStream = (organization: string) => ({
  organization,
  /** performance.now() when its first connection was answered: the server subscribes before. */
  openedAt: undefined as number | undefined,
  /** Today's routed sessions it delivered, and how many it delivered twice. */
  received: new Set<string>(),
  repeated: 0,
});

/**
 * Which of the day's routed sessions each live stream should have delivered, and which it did: a
 * stream that resumes after its server stopped (the SDK reconnects with Last-Event-ID) must
 * deliver every session-started event committed after it opened, once.
 */
class StreamLedger {
  /** Each organization's routed sessions, with when the call that routed each was sent. */
  readonly #routed = new Map<string, Array<{ sessionId: string; sentAt: number }>>();
  readonly #streams: Array<ReturnType<typeof newStream>> = [];

  routed(organization: string, sessionId: string, sentAt: number): void {
    let sessions = this.#routed.get(organization);
    if (!sessions) this.#routed.set(organization, (sessions = []));
    sessions.push({ sessionId, sentAt });
  }

  /** A new stream of `organization`'s events. */
  open(organization: string) {
    const stream = newStream(organization);
    this.#streams.push(stream);
    return stream;
  }

  /**
   * Over all streams, the sessions they should have delivered (routed by a call sent after their
   * stream opened), did and did not yet, and delivered twice. A stream that never opened owes
   * nothing; its failure is counted where it failed.
   */
  count() {
    const total = {
      streams: this.#streams.length,
      expected: 0,
      delivered: 0,
      lost: 0,
      repeated: 0,
    };
    for (const { organization, openedAt, received, repeated } of this.#streams) {
      total.repeated += repeated;
      if (openedAt === undefined) continue;
      for (const { sessionId, sentAt } of this.#routed.get(organization) ?? []) {
        if (sentAt < openedAt) continue;
        total.expected += 1;
        if (received.has(sessionId)) total.delivered += 1;
        else total.lost += 1;
      }
    }
    return total;
  }
}
