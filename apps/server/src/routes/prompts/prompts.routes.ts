// The prompts contract: the route comes from the spec (generated), plus the permission it needs.

import { createRoute } from '@hono/zod-openapi';
import { promptsListRoute } from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';

export const promptsList = createRoute({
  ...promptsListRoute,
  middleware: [requirePermission(promptsListRoute)],
});
