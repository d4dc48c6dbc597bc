// The session-routing contract: the route from the spec (generated), marked as storing its
// Idempotency-Key answer in the routing commit (http/idempotency.ts). Its permission is enforced
// for every operation by http/auth.ts `authorize`. The assignment preview, which stores nothing,
// is the generated route as it is.

import { createRoute } from '@hono/zod-openapi';
import { sessionsRouteRoute } from '../../generated/routes.js';
import { storesAnswerWithWork } from '../../http/idempotency.js';

export const sessionsRoute = createRoute({
  ...sessionsRouteRoute,
  middleware: [storesAnswerWithWork],
});

export { channelTargetsAssignmentRoute as channelTargetsAssignment } from '../../generated/routes.js';
