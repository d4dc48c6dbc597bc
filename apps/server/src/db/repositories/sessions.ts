// Session routing's storage: what a target routes to, and the routed session with its event.
// Reading the running experiment and writing the session happen in one write transaction, so a
// stop that commits first sends this session to the target's own agent, never to a variant of a
// stopped experiment, also across server processes. That transaction is a group commit shared
// with the other sessions routed at the same moment: on SQLite BEGIN IMMEDIATE (which serialises
// writers), on PostgreSQL SERIALIZABLE.

import { randomUUID } from 'node:crypto';
import { sql, type Placeholder } from 'drizzle-orm';
import { RecordNotFoundError, StateConflictError } from '../../domain/errors.js';
import { dueEnd, type PlannedEnd } from '../../domain/experiments.js';
import { nowIso } from '../../domain/timestamps.js';
import { pickVariant } from '../../domain/variant-picking.js';
import type { Db, PostgresDb, SqliteDb } from '../engine/client.js';
import {
  idEquals,
  insertValues,
  jsonText,
  prepared,
  runListRead,
  runStepsInTransaction,
  runStepsInTransactionHolding,
  runStepsOnSqlite,
  selectList,
  type Steps,
} from '../engine/portable-sql.js';
import {
  channelTargets,
  events,
  experiments,
  experimentVariants,
  sessions,
} from '../schema/sqlite.js';
import { perDatabase, remember } from '../engine/caches.js';
import { gatherBatches, type Outcome } from '../engine/gather-batches.js';
import { batchedWrite } from '../engine/write-batcher.js';
import { storePlannedEnd } from './experiments.js';
import {
  IdempotencyKeyTakenError,
  storeAnswersWithWrites,
  storeAnswerWithWrite,
  type IdempotentWrite,
} from './idempotency.js';

/** Who answers a session on the target: the same for routing and for its preview. */
export interface Assignment {
  targetId: number;
  agentId: number;
  experimentId: number | null;
  variantId: number | null;
}

export interface RoutedSessionRecord extends Assignment {
  sessionId: string;
  createdAt: string;
}

export interface SessionRequest {
  userId: string | null;
  conversationId: string | null;
}

/** The Idempotency-Key answer to store with the session, rendered from it (http/idempotency.ts). */
export interface SessionAnswer {
  write: IdempotentWrite;
  render: (session: RoutedSessionRecord) => string;
}

/** The target, and its running experiment's planned end (nulls and 0 without one). */
interface RoutingTarget extends PlannedEnd {
  agentId: number | null;
  runningExperimentId: number | null;
}

interface RoutingVariant {
  id: number;
  weight: number;
  agentId: number;
}

/** What every session-started event has in common. */
const SESSION_STARTED = { source: 'router', category: 'session', type: 'session-started' } as const;

// The values the insert statements take at each run, from sessionValues and sessionStartedEvent.
const SESSION_KEYS = [
  'id',
  'organizationId',
  'targetId',
  'agentId',
  'experimentId',
  'variantId',
  'userId',
  'conversationId',
  'createdAt',
] as const;
const EVENT_KEYS = [
  'organizationId',
  'timestamp',
  'sessionId',
  'conversationId',
  'userId',
  'description',
  'attributes',
] as const;

/** `{ key: sql.placeholder(key) }` for each key: values a prepared statement takes at each run. */
function placeholders<K extends string>(keys: readonly K[]): Record<K, Placeholder> {
  const values: Partial<Record<K, Placeholder>> = {};
  for (const key of keys) values[key] = sql.placeholder(key);
  return values as Record<K, Placeholder>;
}

// A target without a running experiment reads no planned end (LEFT JOIN nulls; 0 sessions).
const PLANNED_END_FIELDS = {
  endAt: experiments.endAt,
  maxSessions: experiments.maxSessions,
  routedSessions: sql`COALESCE(${experiments.routedSessions}, 0)`,
};

// Prepared once: routing is the hottest write path of the service.
const targetWithRunningExperiment = prepared<RoutingTarget>(
  'agentline_routing_target',
  sql`SELECT ${selectList({
    agentId: channelTargets.agentId,
    runningExperimentId: experiments.id,
    ...PLANNED_END_FIELDS,
  })}
      FROM ${channelTargets}
      LEFT JOIN ${experiments}
        ON ${experiments.targetId} = ${channelTargets.id} AND ${experiments.status} = 'running'
      WHERE ${channelTargets.organizationId} = ${sql.placeholder('organizationId')}
        AND ${idEquals(channelTargets.id, sql.placeholder('targetId'))}`,
);

const variantsInOrder = prepared<RoutingVariant>(
  'agentline_routing_variants',
  sql`SELECT ${selectList({
    id: experimentVariants.id,
    weight: experimentVariants.weight,
    agentId: experimentVariants.agentId,
  })} FROM ${experimentVariants}
      WHERE ${experimentVariants.experimentId} = ${sql.placeholder('experimentId')}
      ORDER BY ${experimentVariants.position}`,
);

/** Counts sessions routed to a capped experiment, in the routing transaction. */
const countCappedSessions = prepared(
  'agentline_routing_count_capped',
  sql`UPDATE ${experiments}
      SET routed_sessions = routed_sessions + CAST(${sql.placeholder('count')} AS INTEGER)
      WHERE ${experiments.id} = ${sql.placeholder('experimentId')}`,
);

const insertSession = prepared(
  'agentline_routing_insert_session',
  sql`INSERT INTO ${sessions} ${insertValues(sessions, [placeholders(SESSION_KEYS)])}`,
);

const insertEvent = prepared(
  'agentline_routing_insert_event',
  sql`INSERT INTO ${events} ${insertValues(events, [{ ...SESSION_STARTED, ...placeholders(EVENT_KEYS) }])}`,
);

function requireTarget(targetId: number, target: RoutingTarget | undefined): RoutingTarget {
  if (!target) {
    throw new RecordNotFoundError(`There is no channel target ${targetId} in this organization.`);
  }
  return target;
}

/**
 * Who answers a new session: a variant of the running experiment (`variants`, in order), or else
 * the target's own agent. Routing and the assignment preview both decide here, so a preview
 * answers what routing would.
 */
function assign(
  targetId: number,
  target: RoutingTarget,
  variants: readonly RoutingVariant[],
  userId: string | null,
  random: () => number,
  now: string,
): Assignment {
  const experimentId = target.runningExperimentId;
  // A running experiment past its planned end takes no session: the target's own agent does.
  if (experimentId !== null && dueEnd(target, now) === null) {
    const variant = pickVariant(variants, experimentId, userId, random);
    return { targetId, agentId: variant.agentId, experimentId, variantId: variant.id };
  }
  if (target.agentId !== null) {
    return { targetId, agentId: target.agentId, experimentId: null, variantId: null };
  }
  throw new StateConflictError(
    `Channel target ${targetId} has no agent of its own and no running experiment; assign it an agent or start an experiment on it.`,
  );
}

function newSession(
  targetId: number,
  target: RoutingTarget,
  variants: readonly RoutingVariant[],
  userId: string | null,
  random: () => number,
): RoutedSessionRecord {
  const now = nowIso();
  return {
    sessionId: randomUUID(),
    ...assign(targetId, target, variants, userId, random, now),
    createdAt: now,
  };
}

/**
 * After routing `counted` sessions to the target's running experiment (the last at
 * `lastCountedAt`), in the same transaction: counts them against a max_sessions cap, and stores
 * the planned end that came (end_at) or that they reached (the last allowed session).
 */
function* settlePlannedEnd(
  organizationId: number,
  target: RoutingTarget,
  counted: number,
  lastCountedAt: string | null,
  now: string,
): Steps<void> {
  const experimentId = target.runningExperimentId;
  if (experimentId === null) return;
  const due = dueEnd(target, now);
  if (due === 'end_at') {
    yield* storePlannedEnd(organizationId, experimentId, 'end_at', target.endAt!);
    return;
  }
  if (target.maxSessions === null) return;
  if (counted > 0) yield* countCappedSessions({ experimentId, count: counted });
  if (target.routedSessions + counted >= target.maxSessions) {
    yield* storePlannedEnd(organizationId, experimentId, 'max_sessions', lastCountedAt ?? now);
  }
}

function sessionValues(
  organizationId: number,
  session: RoutedSessionRecord,
  request: SessionRequest,
): Record<(typeof SESSION_KEYS)[number], unknown> {
  return {
    id: session.sessionId,
    organizationId,
    targetId: session.targetId,
    agentId: session.agentId,
    experimentId: session.experimentId,
    variantId: session.variantId,
    userId: request.userId,
    conversationId: request.conversationId,
    createdAt: session.createdAt,
  };
}

function sessionStartedEvent(
  organizationId: number,
  session: RoutedSessionRecord,
  request: SessionRequest,
): Record<(typeof EVENT_KEYS)[number], unknown> {
  return {
    organizationId,
    timestamp: session.createdAt,
    sessionId: session.sessionId,
    conversationId: request.conversationId,
    userId: request.userId,
    description:
      session.experimentId === null
        ? `Session routed to the target's own agent ${session.agentId}`
        : `Session routed to agent ${session.agentId} by experiment ${session.experimentId}`,
    attributes: jsonText({
      target_id: session.targetId,
      agent_id: session.agentId,
      experiment_id: session.experimentId,
      variant_id: session.variantId,
    }),
  };
}

/** What the target and its running experiment are now, as routing reads them. */
function* routingState(
  organizationId: number,
  targetId: number,
): Steps<{ target: RoutingTarget; variants: RoutingVariant[] }> {
  const [found] = yield* targetWithRunningExperiment({ organizationId, targetId });
  const target = requireTarget(targetId, found);
  const experimentId = target.runningExperimentId;
  const variants = experimentId === null ? [] : yield* variantsInOrder({ experimentId });
  return { target, variants };
}

/**
 * What routing a session for `userId` would answer now, read in one snapshot and storing
 * nothing: no session, no event, no count.
 */
export async function previewAssignment(
  db: Db,
  organizationId: number,
  targetId: number,
  userId: string,
): Promise<Assignment> {
  return runListRead(db, function* () {
    const { target, variants } = yield* routingState(organizationId, targetId);
    // A known user's pick is sticky (a hash), so it never draws from `random`.
    return assign(targetId, target, variants, userId, Math.random, nowIso());
  });
}

/** One session, inside the group commit's transaction (SQLite). */
function* routeOne({
  organizationId,
  targetId,
  request,
  random,
  answer,
}: RouteRequest): Steps<RoutedSessionRecord> {
  const { target, variants } = yield* routingState(organizationId, targetId);
  const session = newSession(targetId, target, variants, request.userId, random);
  if (answer && !(yield* storeAnswerWithWrite(answer.write, answer.render(session)))) {
    throw new IdempotencyKeyTakenError();
  }
  yield* insertSession(sessionValues(organizationId, session, request));
  yield* insertEvent(sessionStartedEvent(organizationId, session, request));
  const counted = session.experimentId === null ? 0 : 1;
  yield* settlePlannedEnd(organizationId, target, counted, session.createdAt, session.createdAt);
  if (answer) answer.write.stored = true;
  return session;
}

function routeOnSqlite(db: SqliteDb, route: RouteRequest): Promise<RoutedSessionRecord> {
  return batchedWrite(db, () => runStepsOnSqlite(db, routeOne(route)));
}

// On PostgreSQL the gathered sessions are routed in one transaction of set-based statements,
// each prepared once: the targets, their running experiments and those experiments' variants in
// one read (a row per variant, or one row without a variant); then every session and its event in
// one write. A transaction per session would cost a commit each, one after the other, as an
// organization's event writers take turns (migration 0003's trigger); docs/benchmarks.md has the
// figures.
const postgresRouting = {
  targetsWithRunningExperimentVariants: prepared<{
    organizationId: number;
    targetId: number;
    agentId: number | null;
    runningExperimentId: number | null;
    endAt: string | null;
    maxSessions: number | null;
    routedSessions: number;
    variantId: number | null;
    variantWeight: number | null;
    variantAgentId: number | null;
  }>(
    'agentline_routing_targets',
    sql`SELECT ${selectList({
      organizationId: channelTargets.organizationId,
      targetId: channelTargets.id,
      agentId: channelTargets.agentId,
      runningExperimentId: experiments.id,
      ...PLANNED_END_FIELDS,
      variantId: experimentVariants.id,
      variantWeight: experimentVariants.weight,
      variantAgentId: experimentVariants.agentId,
    })} FROM ${channelTargets}
      LEFT JOIN ${experiments}
        ON ${experiments.targetId} = ${channelTargets.id} AND ${experiments.status} = 'running'
      LEFT JOIN ${experimentVariants} ON ${experimentVariants.experimentId} = ${experiments.id}
      WHERE (${channelTargets.organizationId}, ${channelTargets.id}) IN (
        SELECT * FROM unnest(
          CAST(${sql.placeholder('organizationIds')} AS integer[]),
          CAST(${sql.placeholder('targetIds')} AS bigint[])))
      ORDER BY ${channelTargets.id}, ${experimentVariants.position}`,
  ),
  // One array per column (sessionColumns), a row per session.
  insertSessionsAndEvents: prepared(
    'agentline_routing_insert',
    sql`WITH routed AS (
        SELECT * FROM unnest(
          CAST(${sql.placeholder('id')} AS text[]),
          CAST(${sql.placeholder('organizationId')} AS integer[]),
          CAST(${sql.placeholder('targetId')} AS integer[]),
          CAST(${sql.placeholder('agentId')} AS integer[]),
          CAST(${sql.placeholder('experimentId')} AS integer[]),
          CAST(${sql.placeholder('variantId')} AS integer[]),
          CAST(${sql.placeholder('userId')} AS text[]),
          CAST(${sql.placeholder('conversationId')} AS text[]),
          CAST(${sql.placeholder('createdAt')} AS text[]),
          CAST(${sql.placeholder('description')} AS text[]),
          CAST(${sql.placeholder('attributes')} AS json[]))
        AS session(id, organization_id, target_id, agent_id, experiment_id, variant_id, user_id,
                   conversation_id, created_at, description, attributes)
      ), new_sessions AS (
        INSERT INTO ${sessions} (id, organization_id, target_id, agent_id, experiment_id,
                                 variant_id, user_id, conversation_id, created_at)
        SELECT id, organization_id, target_id, agent_id, experiment_id, variant_id, user_id,
               conversation_id, created_at
        FROM routed
      )
      INSERT INTO ${events} (organization_id, timestamp, session_id, conversation_id, source,
                             category, type, user_id, description, attributes)
      SELECT organization_id, created_at, id, conversation_id, ${SESSION_STARTED.source},
             ${SESSION_STARTED.category}, ${SESSION_STARTED.type}, user_id, description, attributes
      FROM routed`,
  ),
};

interface RouteRequest {
  organizationId: number;
  targetId: number;
  request: SessionRequest;
  random: () => number;
  answer: SessionAnswer | undefined;
}

/** Every routed session's row and event values as one array per column, for unnest. */
function sessionColumns(
  routed: Array<{ route: RouteRequest; session: RoutedSessionRecord }>,
): Record<string, unknown[]> {
  const columns: Record<string, unknown[]> = {};
  for (const { route, session } of routed) {
    const { organizationId, request } = route;
    const event = sessionStartedEvent(organizationId, session, request);
    const values = {
      ...sessionValues(organizationId, session, request),
      description: event.description,
      attributes: event.attributes,
    };
    for (const [key, value] of Object.entries(values)) (columns[key] ??= []).push(value);
  }
  return columns;
}

/**
 * The advisory lock class whose key is a capped experiment's id: PostgreSQL batches that route
 * to it take turns (see routeInOneTransaction).
 */
const CAPPED_EXPERIMENT_LOCK = 1634165601;

/** A batch read a capped experiment whose turn it does not hold: it runs again holding it. */
class CappedTurnNeeded extends Error {
  /** `experimentIds` by the `organizationId:targetId` of the target they run on. */
  constructor(readonly experimentsOfTargets: Map<string, number>) {
    super('routing to a capped experiment needs its turn');
  }
}

/**
 * The capped experiment each target ran when a batch last routed to it, per database: the next
 * batch for the target takes that turn before it begins, instead of finding out in a transaction
 * it must then roll back. A stale entry (the experiment ended) costs an unneeded lock; a missing
 * one costs that rollback, once.
 */
const cappedExperimentOfTarget = perDatabase((_db: PostgresDb) => new Map<string, number>());
/** Targets remembered per database; past it the one routed to longest ago is forgotten. */
const CAPPED_TARGETS_REMEMBERED = 10_000;

/**
 * The gathered sessions, in one transaction (PostgreSQL). `heldTurns` are the capped
 * experiments whose turn the transaction holds; one more stops the batch before it writes.
 */
function* routeBatch(
  routes: RouteRequest[],
  heldTurns: readonly number[],
): Steps<Array<Outcome<RoutedSessionRecord>>> {
  const rows = yield* postgresRouting.targetsWithRunningExperimentVariants({
    organizationIds: routes.map((route) => route.organizationId),
    targetIds: routes.map((route) => route.targetId),
  });
  const unheld = new Map(
    rows.flatMap((row) =>
      row.maxSessions !== null && !heldTurns.includes(row.runningExperimentId!)
        ? [[`${row.organizationId}:${row.targetId}`, row.runningExperimentId!] as const]
        : [],
    ),
  );
  if (unheld.size > 0) throw new CappedTurnNeeded(unheld);
  const rowsOfTarget = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = `${row.organizationId}:${row.targetId}`;
    rowsOfTarget.set(key, [...(rowsOfTarget.get(key) ?? []), row]);
  }
  let routed: Array<{ route: RouteRequest; session: RoutedSessionRecord }> = [];
  // The batch's running experiments as read, and the sessions each took so far: a capped one
  // gives the batch only the sessions it has left, one after the other.
  const running = new Map<number, { organizationId: number; target: RoutingTarget }>();
  const takenInBatch = new Map<number, number>();
  const outcomes = routes.map((route): Outcome<RoutedSessionRecord> => {
    const { organizationId, targetId, request, random } = route;
    const ofTarget = rowsOfTarget.get(`${organizationId}:${targetId}`) ?? [];
    try {
      const read = requireTarget(targetId, ofTarget[0]);
      const experimentId = read.runningExperimentId;
      if (experimentId !== null) running.set(experimentId, { organizationId, target: read });
      const taken = experimentId === null ? 0 : (takenInBatch.get(experimentId) ?? 0);
      const target = { ...read, routedSessions: read.routedSessions + taken };
      const variants = ofTarget.flatMap((row) =>
        row.variantId === null
          ? []
          : [{ id: row.variantId, weight: row.variantWeight!, agentId: row.variantAgentId! }],
      );
      const session = newSession(targetId, target, variants, request.userId, random);
      if (session.experimentId !== null) takenInBatch.set(session.experimentId, taken + 1);
      routed.push({ route, session });
      return { ok: true, value: session };
    } catch (error) {
      return { ok: false, error };
    }
  });
  // Keyed sessions store their answers first, in one statement: one whose key a twin took
  // (earlier, or in this batch) is not routed.
  const keyed = new Map<string, { route: RouteRequest; session: RoutedSessionRecord }>();
  const taken = new Set<RouteRequest>();
  for (const entry of routed) {
    const write = entry.route.answer?.write;
    if (!write) continue;
    const id = `${write.apiKeyId}\n${write.key}`;
    if (keyed.has(id)) taken.add(entry.route);
    else keyed.set(id, entry);
  }
  const stored = yield* storeAnswersWithWrites(
    [...keyed.values()].map(({ route, session }) => ({
      write: route.answer!.write,
      body: route.answer!.render(session),
    })),
  );
  [...keyed.values()].forEach(({ route }, index) => {
    if (!stored[index]) taken.add(route);
  });
  for (const route of taken) {
    outcomes[routes.indexOf(route)] = { ok: false, error: new IdempotencyKeyTakenError() };
  }
  routed = routed.filter(({ route }) => !taken.has(route));
  if (routed.length > 0) {
    // In organization order, so batches take the organizations' write turns (migration 0003's
    // trigger) in one order and never wait on each other in a cycle.
    routed.sort((a, b) => a.route.organizationId - b.route.organizationId);
    yield* postgresRouting.insertSessionsAndEvents(sessionColumns(routed));
  }
  const now = nowIso();
  for (const [experimentId, { organizationId, target }] of running) {
    const counted = routed.filter(({ session }) => session.experimentId === experimentId);
    const lastCountedAt = counted.at(-1)?.session.createdAt ?? null;
    yield* settlePlannedEnd(organizationId, target, counted.length, lastCountedAt, now);
  }
  for (const { route } of routed) if (route.answer) route.answer.write.stored = true;
  return outcomes;
}

/**
 * Routes the batch in one transaction. A capped experiment's count is one row every batch routing
 * to it writes: batches that do take its turn (an advisory lock taken before BEGIN), so under
 * load from several processes they wait for each other instead of failing their serializable
 * commits over and over. Batches without a capped experiment never wait.
 */
async function routeInOneTransaction(
  db: PostgresDb,
  routes: RouteRequest[],
): Promise<Array<Outcome<RoutedSessionRecord>>> {
  const cappedOfTarget = cappedExperimentOfTarget(db);
  const known = routes.flatMap(
    ({ organizationId, targetId }) => cappedOfTarget.get(`${organizationId}:${targetId}`) ?? [],
  );
  let held = [...new Set(known)];
  for (;;) {
    const turns = held;
    try {
      return turns.length === 0
        ? await runStepsInTransaction(db, () => routeBatch(routes, turns))
        : await runStepsInTransactionHolding(
            db,
            { lockClass: CAPPED_EXPERIMENT_LOCK, keys: turns },
            () => routeBatch(routes, turns),
          );
    } catch (error) {
      // Each round holds at least one more turn, so this ends.
      if (!(error instanceof CappedTurnNeeded)) throw error;
      for (const [target, experimentId] of error.experimentsOfTargets) {
        remember(cappedOfTarget, target, experimentId, CAPPED_TARGETS_REMEMBERED);
      }
      held = [...new Set([...held, ...error.experimentsOfTargets.values()])];
    }
  }
}

const routeOnPostgres = gatherBatches(
  async (db: PostgresDb, routes: RouteRequest[]): Promise<Array<Outcome<RoutedSessionRecord>>> => {
    try {
      return await routeInOneTransaction(db, routes);
    } catch (error) {
      if (routes.length === 1) throw error;
      // The database refused the batch's write: route each session on its own, so that the
      // session it refuses fails alone.
      return Promise.all(
        routes.map((route) =>
          routeInOneTransaction(db, [route]).then(
            ([outcome]) => outcome!,
            (alone: unknown) => ({ ok: false, error: alone }) as const,
          ),
        ),
      );
    }
  },
  // One batch in flight per organization: its batches take its write turn one after the other
  // anyway, and each session arriving meanwhile would hold a connection in its own transaction
  // only to queue on that turn, where the next batch does all of their work in one turn.
  { laneOf: (route) => route.organizationId },
);

/** Routes a new session; with `answer`, stores its Idempotency-Key answer in the same commit. */
export async function routeSession(
  db: Db,
  organizationId: number,
  targetId: number,
  request: SessionRequest,
  random: () => number = Math.random,
  answer?: SessionAnswer,
): Promise<RoutedSessionRecord> {
  const route = { organizationId, targetId, request, random, answer };
  return db.kind === 'sqlite' ? routeOnSqlite(db, route) : routeOnPostgres(db, route);
}
