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
  middleware: [requirePermission('experiments_list', 'CHANNELS_READ')],
});
export const experimentsCreate = createRoute({
  ...experimentsCreateRoute,
  middleware: [
    requirePermission('experiments_create', 'CHANNELS_WRITE'),
    claimIdempotencyKeyFirst(),
  ],
});
export const experimentsGet = createRoute({
  ...experimentsGetRoute,
  middleware: [requirePermission('experiments_get', 'CHANNELS_READ')],
});
export const experimentsUpdate = createRoute({
  ...experimentsUpdateRoute,
  middleware: [requirePermission('experiments_update', 'CHANNELS_WRITE')],
});
export const experimentsDelete = createRoute({
  ...experimentsDeleteRoute,
  middleware: [requirePermission('experiments_delete', 'CHANNELS_DELETE')],
});
export const experimentsStart = createRoute({
  ...experimentsStartRoute,
  middleware: [
    requirePermission('experiments_start', 'CHANNELS_WRITE'),
    claimIdempotencyKeyFirst(),
  ],
});
export const experimentsStop = createRoute({
  ...experimentsStopRoute,
  middleware: [requirePermission('experiments_stop', 'CHANNELS_WRITE'), claimIdempotencyKeyFirst()],
});
export const experimentsResults = createRoute({
  ...experimentsResultsRoute,
  middleware: [requirePermission('experiments_results', 'CHANNELS_READ')],
});
