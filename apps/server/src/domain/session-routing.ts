// Session routing's rules: who answers a new session on a target, and what routing sessions to a
// running experiment does to its planned end. Routing on either database (use-cases/routing/) and
// the assignment preview apply the same functions, so a preview answers what routing would.

import { RecordNotFoundError, StateConflictError } from './errors.js';
import type { EndedReason } from '../vocabulary/experiments.js';
import { dueEnd, type PlannedEnd } from './experiments.js';
import { pickVariant } from './variant-picking.js';

/** Who answers a session on the target: the same for routing and for its preview. */
export interface Assignment {
  targetId: number;
  agentId: number;
  experimentId: number | null;
  variantId: number | null;
}

/** The target, and its running experiment's planned end (nulls and 0 without one). */
export interface RoutingTarget extends PlannedEnd {
  agentId: number | null;
  runningExperimentId: number | null;
}

export interface RoutingVariant {
  id: number;
  weight: number;
  agentId: number;
}

/** What routing stores about the running experiment's planned end, in the routing transaction. */
export interface PlannedEndSettlement {
  /** Sessions to add to the experiment's max_sessions count (0: none to add). */
  cappedSessions: number;
  /** The planned end that came (end_at) or that the sessions reached (max_sessions), if any. */
  end: { reason: Exclude<EndedReason, 'stopped'>; at: string } | null;
}

export function requireTarget(targetId: number, target: RoutingTarget | undefined): RoutingTarget {
  if (!target) {
    throw new RecordNotFoundError(`There is no channel target ${targetId} in this organization.`);
  }
  return target;
}

/**
 * Who answers a new session: a variant of the running experiment (`variants`, in order), or else
 * the target's own agent.
 */
export function assign(
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

/**
 * After routing `counted` sessions to the target's running experiment (the last at
 * `lastCountedAt`): how many count against a max_sessions cap, and the planned end that came
 * (end_at) or that they reached (the last allowed session). Null: nothing to store.
 */
export function plannedEndSettlement(
  target: RoutingTarget,
  counted: number,
  lastCountedAt: string | null,
  now: string,
): PlannedEndSettlement | null {
  if (target.runningExperimentId === null) return null;
  if (dueEnd(target, now) === 'end_at') {
    return { cappedSessions: 0, end: { reason: 'end_at', at: target.endAt! } };
  }
  if (target.maxSessions === null) return null;
  const reached = target.routedSessions + counted >= target.maxSessions;
  return {
    cappedSessions: counted,
    end: reached ? { reason: 'max_sessions', at: lastCountedAt ?? now } : null,
  };
}
