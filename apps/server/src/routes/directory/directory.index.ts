import { createRouter } from '../../http/router.js';
import * as handlers from './directory.handlers.js';
import * as routes from './directory.routes.js';

export const directoryRouter = createRouter()
  .openapi(routes.agentsList, handlers.agentsList)
  .openapi(routes.channelTargetsList, handlers.channelTargetsList);
