import type { App } from '../../app.js';
import * as handlers from './sessions.handlers.js';
import * as routes from './sessions.routes.js';

export function registerSessionsRoutes(app: App): void {
  app.openapi(routes.sessionsRoute, handlers.sessionsRoute);
}
