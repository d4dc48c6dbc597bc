import { previewAssignment, routeSession } from '../../use-cases/routing/session-routing.js';
import type { AppRouteHandler } from '../../http/router.js';
import { toWireAssignment, toWireSession } from '../../wire/sessions.js';
import type * as routes from './sessions.routes.js';

export const sessionsRoute: AppRouteHandler<typeof routes.sessionsRoute> = async (c) => {
  const { target_id: targetId } = c.req.valid('param');
  const body = c.req.valid('json');
  const write = c.get('idempotentWrite');
  const session = await routeSession(
    c.get('db'),
    c.get('auth').organizationId,
    targetId,
    { userId: body.user_id ?? null, conversationId: body.conversation_id ?? null },
    Math.random,
    // With an Idempotency-Key, the answer is stored in the session's own commit.
    write && { write, render: (routed) => JSON.stringify(toWireSession(routed)) },
  );
  c.get('metrics').recordRoutedSession(session.experimentId, session.variantId);
  return c.json(toWireSession(session), 200);
};

export const channelTargetsAssignment: AppRouteHandler<
  typeof routes.channelTargetsAssignment
> = async (c) => {
  const { target_id: targetId } = c.req.valid('param');
  const { user_id: userId } = c.req.valid('query');
  const assignment = await previewAssignment(
    c.get('db'),
    c.get('auth').organizationId,
    targetId,
    userId,
  );
  return c.json(toWireAssignment(assignment), 200);
};
