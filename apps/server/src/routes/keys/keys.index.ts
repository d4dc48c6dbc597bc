import { areaRouter } from '../area-router.js';
import * as handlers from './keys.handlers.js';
import * as routes from './keys.routes.js';

export const keysRouter = areaRouter(routes, handlers);
