import { areaRouter } from '../area-router.js';
import * as handlers from './telephony.handlers.js';
import * as routes from './telephony.routes.js';

export const telephonyRouter = areaRouter(routes, handlers);
