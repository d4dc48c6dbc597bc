// Session routing's queries: what a target routes to, and the routed session with its event. The
// routing transactions that run them, and apply routing's rules between them, are
// use-cases/routing/.

import { sql, type Placeholder } from 'drizzle-orm';
import {
  idEquals,
  insertValues,
  jsonText,
  prepared,
  selectList,
  type AdvisoryLock,
  type Steps,
} from '../engine/portable-sql.js';
import {
  channelTargets,
  events,
  experiments,
  experimentVariants,
  idempotencyKeys,
  sessions,
} from '../schema/sqlite.js';
import { heldSince, unlessKeyHeld, type IdempotentWrite } from './idempotency.js';

/** A routed session as stored: who answers it (domain/session-routing.ts decides), and when. */
export interface RoutedSessionRecord {
  sessionId: string;
  targetId: number;
  agentId: number;
  experimentId: number | null;
  variantId: number | null;
  createdAt: string;
}

export interface SessionRequest {
  userId: string | null;
  conversationId: string | null;
}

/** The target, and its running experiment's planned end (nulls and 0 without one). */
export interface RoutingTargetRow {
  agentId: number | null;
  runningExperimentId: number | null;
  endAt: string | null;
  maxSessions: number | null;
  routedSessions: number;
}

export interface RoutingVariantRow {
  id: number;
  weight: number;
  agentId: number;
}

/** A target of a batch with its running experiment, a row per variant (or one without). */
export interface RoutingTargetVariantRow extends RoutingTargetRow {
  organizationId: number;
  targetId: number;
  variantId: number | null;
  variantWeight: number | null;
  variantAgentId: number | null;
}

/** A routed session to store, with the request it answers. */
export interface SessionToStore {
  organizationId: number;
  request: SessionRequest;
  session: RoutedSessionRecord;
  /** Its Idempotency-Key answer, stored with it (insertRoutedSessions only). */
  answer?: { write: IdempotentWrite; body: string };
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
const targetWithRunningExperiment = prepared<RoutingTargetRow>(
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

const variantsInOrder = prepared<RoutingVariantRow>(
  sql`SELECT ${selectList({
    id: experimentVariants.id,
    weight: experimentVariants.weight,
    agentId: experimentVariants.agentId,
  })} FROM ${experimentVariants}
      WHERE ${experimentVariants.experimentId} = ${sql.placeholder('experimentId')}
      ORDER BY ${experimentVariants.position}`,
);

const countCapped = prepared(
  sql`UPDATE ${experiments}
      SET routed_sessions = routed_sessions + CAST(${sql.placeholder('count')} AS INTEGER)
      WHERE ${experiments.id} = ${sql.placeholder('experimentId')}`,
);

const insertSession = prepared(
  sql`INSERT INTO ${sessions} ${insertValues(sessions, [placeholders(SESSION_KEYS)])}`,
);

const insertEvent = prepared(
  sql`INSERT INTO ${events} ${insertValues(events, [{ ...SESSION_STARTED, ...placeholders(EVENT_KEYS) }])}`,
);

// On PostgreSQL the gathered sessions are routed in one transaction of set-based statements,
// each rendered once: the targets, their running experiments and those experiments' variants in
// one read (a row per variant, or one row without a variant); then every session, its event and
// its Idempotency-Key answer in one write. A transaction per session would cost a commit each, one after the other, as an
// organization's event writers take turns (migration 0003's trigger); docs/benchmarks.md has the
// figures.
const targetsWithRunningExperimentVariants = prepared<RoutingTargetVariantRow>(
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
);

// One array per column (sessionColumns), a row per session, in the order given. A session with
// an Idempotency-Key answer stores it in the same statement, and the session and its event only
// if the answer was stored: a key a live row holds (a twin's answer) leaves them out.
const insertSessionsAndEvents = prepared<{ apiKeyId: string; key: string }>(
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
          CAST(${sql.placeholder('attributes')} AS json[]),
          CAST(${sql.placeholder('apiKeyId')} AS text[]),
          CAST(${sql.placeholder('idempotencyKey')} AS text[]),
          CAST(${sql.placeholder('requestHash')} AS text[]),
          CAST(${sql.placeholder('answer')} AS text[])) WITH ORDINALITY
        AS session(id, organization_id, target_id, agent_id, experiment_id, variant_id, user_id,
                   conversation_id, created_at, description, attributes, api_key_id,
                   idempotency_key, request_hash, answer, position)
      ), stored AS (
        INSERT INTO ${idempotencyKeys} (api_key_id, key, request_hash, status, body, created_at)
        SELECT api_key_id, idempotency_key, request_hash, 200, answer,
               CAST(${sql.placeholder('answeredAt')} AS text)
        FROM routed WHERE idempotency_key IS NOT NULL
        ${unlessKeyHeld(sql.placeholder('expiredBefore'), sql.placeholder('leaseBefore'))}
      ), kept AS (
        SELECT * FROM routed
        WHERE idempotency_key IS NULL
           OR (api_key_id, idempotency_key) IN (SELECT "apiKeyId", "key" FROM stored)
      ), new_sessions AS (
        INSERT INTO ${sessions} (id, organization_id, target_id, agent_id, experiment_id,
                                 variant_id, user_id, conversation_id, created_at)
        SELECT id, organization_id, target_id, agent_id, experiment_id, variant_id, user_id,
               conversation_id, created_at
        FROM kept ORDER BY position
      ), new_events AS (
        INSERT INTO ${events} (organization_id, timestamp, session_id, conversation_id, source,
                               category, type, user_id, description, attributes)
        SELECT organization_id, created_at, id, conversation_id, ${SESSION_STARTED.source},
               ${SESSION_STARTED.category}, ${SESSION_STARTED.type}, user_id, description,
               attributes
        FROM kept ORDER BY position
      )
      SELECT "apiKeyId", "key" FROM stored`,
);

function sessionValues({
  organizationId,
  session,
  request,
}: SessionToStore): Record<(typeof SESSION_KEYS)[number], unknown> {
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

function sessionStartedEvent({
  organizationId,
  session,
  request,
}: SessionToStore): Record<(typeof EVENT_KEYS)[number], unknown> {
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

/** Every routed session's row, event and answer values as one array per column, for unnest. */
function sessionColumns(routed: readonly SessionToStore[]): Record<string, unknown[]> {
  const columns: Record<string, unknown[]> = {};
  for (const stored of routed) {
    const event = sessionStartedEvent(stored);
    const write = stored.answer?.write;
    const values = {
      ...sessionValues(stored),
      description: event.description,
      attributes: event.attributes,
      apiKeyId: write?.apiKeyId ?? null,
      idempotencyKey: write?.key ?? null,
      requestHash: write?.requestHash ?? null,
      answer: stored.answer?.body ?? null,
    };
    for (const [key, value] of Object.entries(values)) (columns[key] ??= []).push(value);
  }
  return columns;
}

/** The target and its running experiment, if the organization has that target. */
export function* readRoutingTarget(
  organizationId: number,
  targetId: number,
): Steps<RoutingTargetRow | undefined> {
  const [found] = yield* targetWithRunningExperiment({ organizationId, targetId });
  return found;
}

/** The experiment's variants, in their order. */
export function readVariantsInOrder(experimentId: number): Steps<RoutingVariantRow[]> {
  return variantsInOrder({ experimentId });
}

/** The targets of a batch with their running experiments' variants, one statement (PostgreSQL). */
export function readRoutingTargets(
  targets: ReadonlyArray<{ organizationId: number; targetId: number }>,
): Steps<RoutingTargetVariantRow[]> {
  return targetsWithRunningExperimentVariants({
    organizationIds: targets.map((target) => target.organizationId),
    targetIds: targets.map((target) => target.targetId),
  });
}

/** Counts sessions routed to a capped experiment, in the routing transaction. */
export function* countCappedSessions(experimentId: number, count: number): Steps<void> {
  yield* countCapped({ experimentId, count });
}

/** Stores a routed session and its session-started event. */
export function* insertRoutedSession(stored: SessionToStore): Steps<void> {
  yield* insertSession(sessionValues(stored));
  yield* insertEvent(sessionStartedEvent(stored));
}

/**
 * An organization's write turn on PostgreSQL: the advisory lock migration 0003's trigger takes
 * for each event inserted, so that the organization's events commit in id order. A SERIALIZABLE
 * transaction that inserts events takes it before its first read (runStepsInTransaction's turns):
 * one that waited for it at the insert would fail, its snapshot older than the event counts the
 * holder committed meanwhile, as long as other writers kept the turn busy.
 */
export function eventWriteTurn(organizationId: number): AdvisoryLock {
  return { lockClass: 1634167909, key: organizationId };
}

/**
 * Stores routed sessions and their events in one statement (PostgreSQL's unnest), each with its
 * Idempotency-Key answer if it has one; says for each whether it was stored: false for a session
 * whose key a live row holds. The answers share one server's times, and their keys differ.
 */
export function* insertRoutedSessions(routed: readonly SessionToStore[]): Steps<boolean[]> {
  const now = new Date();
  const times = routed.find((stored) => stored.answer)?.answer?.write.times;
  const held = times ? heldSince(times, now) : { expiredBefore: null, leaseBefore: null };
  const stored = yield* insertSessionsAndEvents({
    ...sessionColumns(routed),
    answeredAt: now.toISOString(),
    ...held,
  });
  const storedKeys = new Set(stored.map((row) => `${row.apiKeyId}\n${row.key}`));
  return routed.map(
    ({ answer }) => !answer || storedKeys.has(`${answer.write.apiKeyId}\n${answer.write.key}`),
  );
}
