// Session routing and its preview, on either database: each engine's router (sqlite-router.ts,
// postgres-router.ts) routes, and both apply the same rules (domain/session-routing.ts).

import { assign, type Assignment } from '../../domain/session-routing.js';
import { nowIso } from '../../domain/timestamps.js';
import type { Db } from '../../db/engine/client.js';
import { runListRead } from '../../db/engine/portable-sql.js';
import type { RoutedSessionRecord, SessionRequest } from '../../db/repositories/sessions.js';
import { postgresRouter } from './postgres-router.js';
import { routingState, type SessionAnswer } from './session-router.js';
import { sqliteRouter } from './sqlite-router.js';

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
  return db.kind === 'sqlite' ? sqliteRouter.route(db, route) : postgresRouter.route(db, route);
}
