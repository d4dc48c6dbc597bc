// The session-routing contract: the route from the spec (generated) and its permission.

import { createRoute } from '@hono/zod-openapi';
import { sessionsRouteRoute } from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';

export const sessionsRoute = createRoute({
  ...sessionsRouteRoute,
  middleware: [requirePermission('sessions_route', 'SESSIONS_WRITE')],
});
