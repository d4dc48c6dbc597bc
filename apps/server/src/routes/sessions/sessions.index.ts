import { areaRouter } from '../area-router.js';
import * as handlers from './sessions.handlers.js';
import * as routes from './sessions.routes.js';

export const sessionsRouter = areaRouter(routes, handlers);
