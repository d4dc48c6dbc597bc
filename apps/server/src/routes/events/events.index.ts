import { createRoute } from '@hono/zod-openapi';
import { createRouter } from '../../http/router.js';
import * as handlers from './events.handlers.js';
import * as routes from './events.routes.js';

export const eventsRouter = createRouter()
  .openapi(
    createRoute({ ...routes.eventsList, middleware: [handlers.keptEventsAnswer] }),
    handlers.eventsList,
  )
  .openapi(routes.eventsStream, handlers.eventsStream);
