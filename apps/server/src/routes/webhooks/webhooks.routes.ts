// The webhooks contract: routes from the spec (generated). The POSTs that change an endpoint or
// queue a message claim their Idempotency-Key before the work, which is not stored with its answer
// (http/idempotency.ts). Permissions are enforced for every operation by http/auth.ts `authorize`.

import { createRoute } from '@hono/zod-openapi';
import {
  webhooksEndpointsCreateRoute,
  webhooksEndpointsReplayRoute,
  webhooksEndpointsRotateSecretRoute,
  webhooksEndpointsTestRoute,
} from '../../generated/routes.js';
import { claimIdempotencyKeyFirst } from '../../http/idempotency.js';

export {
  webhooksEndpointsDeleteRoute as webhooksEndpointsDelete,
  webhooksEndpointsDeliveriesRoute as webhooksEndpointsDeliveries,
  webhooksEndpointsGetRoute as webhooksEndpointsGet,
  webhooksEndpointsListRoute as webhooksEndpointsList,
  webhooksEndpointsUpdateRoute as webhooksEndpointsUpdate,
} from '../../generated/routes.js';

export const webhooksEndpointsCreate = createRoute({
  ...webhooksEndpointsCreateRoute,
  middleware: [claimIdempotencyKeyFirst()],
});
export const webhooksEndpointsRotateSecret = createRoute({
  ...webhooksEndpointsRotateSecretRoute,
  middleware: [claimIdempotencyKeyFirst()],
});
export const webhooksEndpointsTest = createRoute({
  ...webhooksEndpointsTestRoute,
  middleware: [claimIdempotencyKeyFirst()],
});
export const webhooksEndpointsReplay = createRoute({
  ...webhooksEndpointsReplayRoute,
  middleware: [claimIdempotencyKeyFirst()],
});
