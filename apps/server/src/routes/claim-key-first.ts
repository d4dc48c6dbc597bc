// The POSTs whose work is not stored with its answer (starting an experiment, queueing a webhook
// message) claim their Idempotency-Key before the work (http/idempotency.ts).

import { createRoute, type RouteConfig } from '@hono/zod-openapi';
import { claimIdempotencyKeyFirst } from '../http/idempotency.js';

/** The generated `route`, claiming its Idempotency-Key before its handler runs. */
export function claimingKeyFirst<R extends RouteConfig>(route: R) {
  return createRoute({ ...route, middleware: [claimIdempotencyKeyFirst()] });
}
