// The experiments contract: routes from the spec (generated), each with the permission it needs.
// The POSTs that change an experiment claim their Idempotency-Key before the work, which is not
// stored with its answer (http/idempotency.ts).

import { createRoute } from '@hono/zod-openapi';
import {
  experimentsCreateRoute,
  experimentsDeleteRoute,
  experimentsGetRoute,
  experimentsListRoute,
  experimentsResultsRoute,
  experimentsStartRoute,
  experimentsStopRoute,
  experimentsUpdateRoute,
} from '../../generated/routes.js';
import { requirePermission } from '../../http/auth.js';
import { claimIdempotencyKeyFirst } from '../../http/idempotency.js';

export const experimentsList = createRoute({
  ...experimentsListRoute,
  middleware: [requirePermission(experimentsListRoute)],
});
export const experimentsCreate = createRoute({
  ...experimentsCreateRoute,
  middleware: [requirePermission(experimentsCreateRoute), claimIdempotencyKeyFirst()],
});
export const experimentsGet = createRoute({
  ...experimentsGetRoute,
  middleware: [requirePermission(experimentsGetRoute)],
});
export const experimentsUpdate = createRoute({
  ...experimentsUpdateRoute,
  middleware: [requirePermission(experimentsUpdateRoute)],
});
export const experimentsDelete = createRoute({
  ...experimentsDeleteRoute,
  middleware: [requirePermission(experimentsDeleteRoute)],
});
export const experimentsStart = createRoute({
  ...experimentsStartRoute,
  middleware: [requirePermission(experimentsStartRoute), claimIdempotencyKeyFirst()],
});
export const experimentsStop = createRoute({
  ...experimentsStopRoute,
  middleware: [requirePermission(experimentsStopRoute), claimIdempotencyKeyFirst()],
});
export const experimentsResults = createRoute({
  ...experimentsResultsRoute,
  middleware: [requirePermission(experimentsResultsRoute)],
});
