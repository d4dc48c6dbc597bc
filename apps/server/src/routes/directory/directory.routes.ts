// The agents and channel targets lists (read-only): routes from the spec (generated), each
// guarded by the permission the spec names.

import { createRoute } from '@hono/zod-openapi';
import { agentsListRoute, channelTargetsListRoute } from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';

export const agentsList = createRoute({
  ...agentsListRoute,
  middleware: [requirePermission(agentsListRoute)],
});
export const channelTargetsList = createRoute({
  ...channelTargetsListRoute,
  middleware: [requirePermission(channelTargetsListRoute)],
});
