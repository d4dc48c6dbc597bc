// The webhooks contract: routes from the spec (generated). The POSTs that change an endpoint or
// queue a message claim their Idempotency-Key before the work, which is not stored with its answer
// (http/idempotency.ts). Permissions are enforced for every operation by http/auth.ts `authorize`.

import {
  webhooksEndpointsCreateRoute,
  webhooksEndpointsReplayRoute,
  webhooksEndpointsRotateSecretRoute,
  webhooksEndpointsTestRoute,
} from '../../generated/routes.js';
import { claimingKeyFirst } from '../claim-key-first.js';

export {
  webhooksEndpointsDeleteRoute as webhooksEndpointsDelete,
  webhooksEndpointsDeliveriesRoute as webhooksEndpointsDeliveries,
  webhooksEndpointsGetRoute as webhooksEndpointsGet,
  webhooksEndpointsListRoute as webhooksEndpointsList,
  webhooksEndpointsUpdateRoute as webhooksEndpointsUpdate,
} from '../../generated/routes.js';

export const webhooksEndpointsCreate = claimingKeyFirst(webhooksEndpointsCreateRoute);
export const webhooksEndpointsRotateSecret = claimingKeyFirst(webhooksEndpointsRotateSecretRoute);
export const webhooksEndpointsTest = claimingKeyFirst(webhooksEndpointsTestRoute);
export const webhooksEndpointsReplay = claimingKeyFirst(webhooksEndpointsReplayRoute);
