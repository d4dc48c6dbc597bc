import { createRouter } from '../../http/router.js';
import * as handlers from './experiments.handlers.js';
import * as routes from './experiments.routes.js';

export const experimentsRouter = createRouter()
  .openapi(routes.experimentsList, handlers.experimentsList)
  .openapi(routes.experimentsCreate, handlers.experimentsCreate)
  .openapi(routes.experimentsGet, handlers.experimentsGet)
  .openapi(routes.experimentsUpdate, handlers.experimentsUpdate)
  .openapi(routes.experimentsDelete, handlers.experimentsDelete)
  .openapi(routes.experimentsStart, handlers.experimentsStart)
  .openapi(routes.experimentsStop, handlers.experimentsStop)
  .openapi(routes.experimentsResults, handlers.experimentsResults)
  .openapi(routes.experimentsResultsTimeline, handlers.experimentsResultsTimeline)
  .openapi(routes.experimentsHistory, handlers.experimentsHistory);
