import { createRouter } from '../../http/router.js';
import * as handlers from './events.handlers.js';
import * as routes from './events.routes.js';

export const eventsRouter = createRouter()
  .openapi(routes.eventsList, handlers.eventsList)
  .openapi(routes.eventsStream, handlers.eventsStream);
