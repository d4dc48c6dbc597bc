import { createRouter } from '../../http/router.js';
import * as handlers from './telephony.handlers.js';
import * as routes from './telephony.routes.js';

export const telephonyRouter = createRouter()
  .openapi(
    routes.channelsTelephonyNumbersVerifyA2pCompliance,
    handlers.channelsTelephonyNumbersVerifyA2pCompliance,
  )
  .openapi(routes.channelsTelephonyNumbersA2pStatus, handlers.channelsTelephonyNumbersA2pStatus);
