import type { App } from '../../app.js';
import * as handlers from './experiments.handlers.js';
import * as routes from './experiments.routes.js';

export function registerExperimentsRoutes(app: App): void {
  app.openapi(routes.experimentsList, handlers.experimentsList);
  app.openapi(routes.experimentsCreate, handlers.experimentsCreate);
  app.openapi(routes.experimentsGet, handlers.experimentsGet);
  app.openapi(routes.experimentsUpdate, handlers.experimentsUpdate);
  app.openapi(routes.experimentsDelete, handlers.experimentsDelete);
  app.openapi(routes.experimentsStart, handlers.experimentsStart);
  app.openapi(routes.experimentsStop, handlers.experimentsStop);
  app.openapi(routes.experimentsResults, handlers.experimentsResults);
}
