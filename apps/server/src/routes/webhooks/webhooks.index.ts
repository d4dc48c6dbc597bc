import { areaRouter } from '../area-router.js';
import * as handlers from './webhooks.handlers.js';
import * as routes from './webhooks.routes.js';

export const webhooksRouter = areaRouter(routes, handlers);
