// Session routing's storage: what a target routes to, and the routed session with its event.
// Reading the running experiment and writing the session happen in one write transaction (a
// group commit shared with other sessions routed at the same moment), so a stop that commits
// first sends this session to the target's own agent, never to a variant of a stopped
// experiment (also across server processes: BEGIN IMMEDIATE serialises writers).

import { randomUUID } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import { RecordNotFoundError, StateConflictError } from '../../domain/errors.js';
import { nowIso } from '../../domain/timestamps.js';
import { pickVariant } from '../../domain/variant-picking.js';
import type { Db } from '../client.js';
import { perDatabase } from '../prepared.js';
import { batchedWrite } from '../write-batcher.js';
import { channelTargets, events, experiments, experimentVariants, sessions } from '../schema.js';

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

// Prepared once per database: routing is the hottest write path of the service.
const routingStatements = perDatabase((db) => ({
  targetWithRunningExperiment: db.orm
    .select({
      agentId: channelTargets.agentId,
      runningExperimentId: experiments.id,
    })
    .from(channelTargets)
    .leftJoin(
      experiments,
      and(eq(experiments.targetId, channelTargets.id), eq(experiments.status, 'running')),
    )
    .where(
      and(
        eq(channelTargets.organizationId, sql.placeholder('organizationId')),
        eq(channelTargets.id, sql.placeholder('targetId')),
      ),
    )
    .prepare(),
  variantsInOrder: db.orm
    .select({
      id: experimentVariants.id,
      weight: experimentVariants.weight,
      agentId: experimentVariants.agentId,
    })
    .from(experimentVariants)
    .where(eq(experimentVariants.experimentId, sql.placeholder('experimentId')))
    .orderBy(asc(experimentVariants.position))
    .prepare(),
  insertSession: db.orm
    .insert(sessions)
    .values({
      id: sql.placeholder('id'),
      organizationId: sql.placeholder('organizationId'),
      targetId: sql.placeholder('targetId'),
      agentId: sql.placeholder('agentId'),
      experimentId: sql.placeholder('experimentId'),
      variantId: sql.placeholder('variantId'),
      userId: sql.placeholder('userId'),
      conversationId: sql.placeholder('conversationId'),
      createdAt: sql.placeholder('createdAt'),
    })
    .prepare(),
  insertEvent: db.orm
    .insert(events)
    .values({
      organizationId: sql.placeholder('organizationId'),
      timestamp: sql.placeholder('timestamp'),
      sessionId: sql.placeholder('sessionId'),
      conversationId: sql.placeholder('conversationId'),
      source: 'router',
      category: 'session',
      type: 'session-started',
      userId: sql.placeholder('userId'),
      description: sql.placeholder('description'),
      attributes: sql.placeholder('attributes'),
    })
    .prepare(),
}));

export async function routeSession(
  db: Db,
  organizationId: number,
  targetId: number,
  request: SessionRequest,
  random: () => number = Math.random,
): Promise<RoutedSessionRecord> {
  const statements = routingStatements(db);
  return batchedWrite(db, () => {
    const target = statements.targetWithRunningExperiment.get({ organizationId, targetId });
    if (!target) {
      throw new RecordNotFoundError(`There is no channel target ${targetId} in this organization.`);
    }
    const experimentId = target.runningExperimentId;
    let pick: { agentId: number; experimentId: number | null; variantId: number | null };
    if (experimentId !== null) {
      const variants = statements.variantsInOrder.all({ experimentId });
      const variant = pickVariant(variants, experimentId, request.userId, random);
      pick = { agentId: variant.agentId, experimentId, variantId: variant.id };
    } else if (target.agentId !== null) {
      pick = { agentId: target.agentId, experimentId: null, variantId: null };
    } else {
      throw new StateConflictError(
        `Channel target ${targetId} has no agent of its own and no running experiment; assign it an agent or start an experiment on it.`,
      );
    }

    const session: RoutedSessionRecord = {
      sessionId: randomUUID(),
      targetId,
      ...pick,
      createdAt: nowIso(),
    };
    statements.insertSession.run({
      id: session.sessionId,
      organizationId,
      targetId,
      agentId: session.agentId,
      experimentId: session.experimentId,
      variantId: session.variantId,
      userId: request.userId,
      conversationId: request.conversationId,
      createdAt: session.createdAt,
    });
    statements.insertEvent.run({
      organizationId,
      timestamp: session.createdAt,
      sessionId: session.sessionId,
      conversationId: request.conversationId,
      userId: request.userId,
      description:
        session.experimentId === null
          ? `Session routed to the target's own agent ${session.agentId}`
          : `Session routed to agent ${session.agentId} by experiment ${session.experimentId}`,
      attributes: {
        target_id: targetId,
        agent_id: session.agentId,
        experiment_id: session.experimentId,
        variant_id: session.variantId,
      },
    });
    return session;
  });
}
