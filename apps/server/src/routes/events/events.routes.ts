// The events contract: the route comes from the spec (generated), plus the permission it needs.

import { createRoute } from '@hono/zod-openapi';
import { eventsListRoute } from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';

export const eventsList = createRoute({
  ...eventsListRoute,
  middleware: [requirePermission(eventsListRoute)],
});
