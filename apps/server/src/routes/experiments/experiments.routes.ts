// The experiments contract: routes from the spec (generated). The POSTs that change an experiment
// claim their Idempotency-Key before the work, which is not stored with its answer
// (http/idempotency.ts). Permissions are enforced for every operation by http/auth.ts `authorize`.

import {
  experimentsCreateRoute,
  experimentsStartRoute,
  experimentsStopRoute,
} from '../../generated/routes.js';
import { claimingKeyFirst } from '../claim-key-first.js';

export {
  experimentsDeleteRoute as experimentsDelete,
  experimentsGetRoute as experimentsGet,
  experimentsHistoryRoute as experimentsHistory,
  experimentsListRoute as experimentsList,
  experimentsResultsRoute as experimentsResults,
  experimentsResultsTimelineRoute as experimentsResultsTimeline,
  experimentsUpdateRoute as experimentsUpdate,
} from '../../generated/routes.js';

export const experimentsCreate = claimingKeyFirst(experimentsCreateRoute);
export const experimentsStart = claimingKeyFirst(experimentsStartRoute);
export const experimentsStop = claimingKeyFirst(experimentsStopRoute);
