import type { App } from '../../app.js';
import * as handlers from './telephony.handlers.js';
import * as routes from './telephony.routes.js';

export function registerTelephonyRoutes(app: App): void {
  app.openapi(
    routes.channelsTelephonyNumbersVerifyA2pCompliance,
    handlers.channelsTelephonyNumbersVerifyA2pCompliance,
  );
}
