import type { App } from '../../app.js';
import * as handlers from './events.handlers.js';
import * as routes from './events.routes.js';

export function registerEventsRoutes(app: App): void {
  app.openapi(routes.eventsList, handlers.eventsList);
}
