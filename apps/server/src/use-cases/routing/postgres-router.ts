// Session routing on PostgreSQL: the sessions gathered in a turn of the event loop are routed in
// one SERIALIZABLE transaction of set-based statements (the sessions repository's unnest reads and
// writes), one batch in flight per organization. A batch runs holding its organizations' event
// write turns and its capped experiments' turns, taken before its first read; a batch the
// database refuses is routed again a session at a time, so the session it refuses fails alone.

import { nowIso } from '../../domain/timestamps.js';
import { requireTarget, type RoutingTarget } from '../../domain/session-routing.js';
import type { PostgresDb } from '../../db/engine/client.js';
import { gatherBatches, type Outcome } from '../../db/engine/gather-batches.js';
import { runStepsInTransaction, type Steps } from '../../db/engine/portable-sql.js';
import { IdempotencyKeyTakenError } from '../../db/repositories/idempotency.js';
import {
  eventWriteTurn,
  insertRoutedSessions,
  readRoutingTargets,
  type RoutedSessionRecord,
} from '../../db/repositories/sessions.js';
import { knownCappedExperiments, rememberCappedExperiments, targetKey } from './capped-targets.js';
import {
  newSession,
  settlePlannedEnd,
  type RouteRequest,
  type SessionRouter,
} from './session-router.js';

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
 * The gathered sessions, in one transaction. `heldTurns` are the capped experiments whose turn
 * the transaction holds; one more stops the batch before it writes.
 */
function* routeBatch(
  routes: RouteRequest[],
  heldTurns: readonly number[],
): Steps<Array<Outcome<RoutedSessionRecord>>> {
  const rows = yield* readRoutingTargets(routes);
  const unheld = new Map(
    rows.flatMap((row) =>
      row.maxSessions !== null && !heldTurns.includes(row.runningExperimentId!)
        ? [[targetKey(row.organizationId, row.targetId), row.runningExperimentId!] as const]
        : [],
    ),
  );
  if (unheld.size > 0) throw new CappedTurnNeeded(unheld);
  const rowsOfTarget = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = targetKey(row.organizationId, row.targetId);
    rowsOfTarget.set(key, [...(rowsOfTarget.get(key) ?? []), row]);
  }
  let routed: Array<{ route: RouteRequest; session: RoutedSessionRecord }> = [];
  // The batch's running experiments as read, and the sessions each took so far: a capped one
  // gives the batch only the sessions it has left, one after the other.
  const running = new Map<number, { organizationId: number; target: RoutingTarget }>();
  const takenInBatch = new Map<number, number>();
  const outcomes = routes.map((route): Outcome<RoutedSessionRecord> => {
    const { organizationId, targetId, request, random } = route;
    const ofTarget = rowsOfTarget.get(targetKey(organizationId, targetId)) ?? [];
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
  // A keyed session whose key a twin took, earlier or in this batch, is not routed: a twin in the
  // batch is found here, an earlier one by the insert, which stores each answer with its session.
  const keys = new Set<string>();
  const taken = new Set<RouteRequest>();
  for (const { route } of routed) {
    const write = route.answer?.write;
    if (!write) continue;
    const key = `${write.apiKeyId}\n${write.key}`;
    if (keys.has(key)) taken.add(route);
    else keys.add(key);
  }
  routed = routed.filter(({ route }) => !taken.has(route));
  if (routed.length > 0) {
    const stored = yield* insertRoutedSessions(
      routed.map(({ route, session }) => ({
        organizationId: route.organizationId,
        request: route.request,
        session,
        answer: route.answer && { write: route.answer.write, body: route.answer.render(session) },
      })),
    );
    routed.forEach(({ route }, index) => {
      if (!stored[index]) taken.add(route);
    });
    routed = routed.filter(({ route }) => !taken.has(route));
  }
  for (const route of taken) {
    outcomes[routes.indexOf(route)] = { ok: false, error: new IdempotencyKeyTakenError() };
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
 * Routes the batch in one transaction, holding turns taken before any read (advisory locks), so
 * that under load from several processes and the event import its writers wait for each other
 * instead of failing their serializable commits over and over: its organizations' event write
 * turns (the event counts are rows every event insert writes), and the turn of each capped
 * experiment it routes to (whose session count is one row every batch routing to it writes).
 */
async function routeInOneTransaction(
  db: PostgresDb,
  routes: RouteRequest[],
): Promise<Array<Outcome<RoutedSessionRecord>>> {
  const writeTurns = [...new Set(routes.map((route) => route.organizationId))].map(eventWriteTurn);
  let held = knownCappedExperiments(db, routes);
  for (;;) {
    const turns = held;
    const cappedTurns = turns.map((key) => ({ lockClass: CAPPED_EXPERIMENT_LOCK, key }));
    try {
      return await runStepsInTransaction(db, () => routeBatch(routes, turns), [
        ...writeTurns,
        ...cappedTurns,
      ]);
    } catch (error) {
      // Each round holds at least one more turn, so this ends.
      if (!(error instanceof CappedTurnNeeded)) throw error;
      rememberCappedExperiments(db, error.experimentsOfTargets);
      held = [...new Set([...held, ...error.experimentsOfTargets.values()])];
    }
  }
}

const routeGathered = gatherBatches(
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

export const postgresRouter: SessionRouter<PostgresDb> = { route: routeGathered };
