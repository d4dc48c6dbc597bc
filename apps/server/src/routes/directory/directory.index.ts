import type { App } from '../../app.js';
import * as handlers from './directory.handlers.js';
import * as routes from './directory.routes.js';

export function registerDirectoryRoutes(app: App): void {
  app.openapi(routes.agentsList, handlers.agentsList);
  app.openapi(routes.channelTargetsList, handlers.channelTargetsList);
}
