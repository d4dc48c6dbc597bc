// Session routing on SQLite: each session in a savepoint of a group commit (write-batcher.ts),
// BEGIN IMMEDIATE serialising the writers, so one that fails (an unknown target) rolls back alone.

import type { SqliteDb } from '../../db/engine/sqlite-open.js';
import { runStepsOnSqlite, type Steps } from '../../db/engine/portable-sql.js';
import { batchedWrite } from '../../db/engine/write-batcher.js';
import {
  IdempotencyKeyTakenError,
  storeAnswerWithWrite,
} from '../../db/repositories/idempotency.js';
import { insertRoutedSession, type RoutedSessionRecord } from '../../db/repositories/sessions.js';
import {
  newSession,
  routingState,
  settlePlannedEnd,
  type RouteRequest,
  type SessionRouter,
} from './session-router.js';

/** One session, inside the group commit's transaction. */
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
  yield* insertRoutedSession({ organizationId, request, session });
  const counted = session.experimentId === null ? 0 : 1;
  yield* settlePlannedEnd(organizationId, target, counted, session.createdAt, session.createdAt);
  if (answer) answer.write.stored = true;
  return session;
}

export const sqliteRouter: SessionRouter<SqliteDb> = {
  route: (db, route) => batchedWrite(db, () => runStepsOnSqlite(db, routeOne(route))),
};
