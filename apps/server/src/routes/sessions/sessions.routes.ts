// The session-routing contract: the route from the spec (generated) and its permission. Its
// Idempotency-Key answer is stored in the routing commit (http/idempotency.ts).

import { createRoute } from '@hono/zod-openapi';
import { sessionsRouteRoute } from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';
import { storesAnswerWithWork } from '../../http/idempotency.js';

export const sessionsRoute = createRoute({
  ...sessionsRouteRoute,
  middleware: [requirePermission(sessionsRouteRoute), storesAnswerWithWork],
});
