import { areaRouter } from '../area-router.js';
import * as handlers from './experiments.handlers.js';
import * as routes from './experiments.routes.js';

export const experimentsRouter = areaRouter(routes, handlers);
