import { createRouter } from '../../http/router.js';
import * as handlers from './sessions.handlers.js';
import * as routes from './sessions.routes.js';

export const sessionsRouter = createRouter()
  .openapi(routes.sessionsRoute, handlers.sessionsRoute)
  .openapi(routes.channelTargetsAssignment, handlers.channelTargetsAssignment);
