// The one place a routed session becomes the wire RoutedSession (shape from the spec's generated
// types); session routing also stores this text as its Idempotency-Key answer. The assignment
// preview's answer is the same decision without a session.

import type { RoutedSessionRecord } from '../db/repositories/sessions.js';
import type { Assignment } from '../domain/session-routing.js';
import type { components } from '../spec-types.js';

export type WireAssignment = components['schemas']['Assignment'];

export const toWireAssignment = (assignment: Assignment): WireAssignment => ({
  target_id: assignment.targetId,
  agent_id: assignment.agentId,
  experiment_id: assignment.experimentId,
  variant_id: assignment.variantId,
});

export type WireRoutedSession = Required<components['schemas']['RoutedSession']>;

export const toWireSession = (session: RoutedSessionRecord): WireRoutedSession => ({
  session_id: session.sessionId,
  ...toWireAssignment(session),
  created_at: session.createdAt,
});
