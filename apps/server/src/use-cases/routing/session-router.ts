// What routing on either database shares: the request, the router each engine implements
// (sqlite-router.ts, postgres-router.ts), and the steps both run inside their transactions, where
// they apply routing's rules (domain/session-routing.ts) to what the sessions repository reads.

import { randomUUID } from 'node:crypto';
import {
  assign,
  plannedEndSettlement,
  requireTarget,
  type RoutingTarget,
  type RoutingVariant,
} from '../../domain/session-routing.js';
import { nowIso } from '../../domain/timestamps.js';
import type { Db } from '../../db/engine/client.js';
import type { Steps } from '../../db/engine/portable-sql.js';
import { storePlannedEnd } from '../experiment-changes.js';
import type { IdempotentWrite } from '../../db/repositories/idempotency.js';
import {
  countCappedSessions,
  readRoutingTarget,
  readVariantsInOrder,
  type RoutedSessionRecord,
  type SessionRequest,
} from '../../db/repositories/sessions.js';

/** The Idempotency-Key answer to store with the session, rendered from it (http/idempotency.ts). */
export interface SessionAnswer {
  write: IdempotentWrite;
  render: (session: RoutedSessionRecord) => string;
}

export interface RouteRequest {
  organizationId: number;
  targetId: number;
  request: SessionRequest;
  random: () => number;
  answer: SessionAnswer | undefined;
}

/**
 * Routes sessions on one engine. Reading the running experiment and writing the session happen in
 * one write transaction, so a stop that commits first sends the session to the target's own
 * agent, never to a variant of a stopped experiment, also across server processes.
 */
export interface SessionRouter<D extends Db> {
  /** Routes a new session; with an answer, stores its Idempotency-Key answer in the same commit. */
  route(db: D, route: RouteRequest): Promise<RoutedSessionRecord>;
}

/** What the target and its running experiment are now, as routing reads them. */
export function* routingState(
  organizationId: number,
  targetId: number,
): Steps<{ target: RoutingTarget; variants: RoutingVariant[] }> {
  const target = requireTarget(targetId, yield* readRoutingTarget(organizationId, targetId));
  const experimentId = target.runningExperimentId;
  const variants = experimentId === null ? [] : yield* readVariantsInOrder(experimentId);
  return { target, variants };
}

export function newSession(
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
 * `lastCountedAt`), in the same transaction: stores what plannedEndSettlement decides.
 */
export function* settlePlannedEnd(
  organizationId: number,
  target: RoutingTarget,
  counted: number,
  lastCountedAt: string | null,
  now: string,
): Steps<void> {
  const experimentId = target.runningExperimentId;
  const settlement = plannedEndSettlement(target, counted, lastCountedAt, now);
  if (experimentId === null || settlement === null) return;
  if (settlement.cappedSessions > 0) {
    yield* countCappedSessions(experimentId, settlement.cappedSessions);
  }
  if (settlement.end) {
    yield* storePlannedEnd(organizationId, experimentId, settlement.end.reason, settlement.end.at);
  }
}
