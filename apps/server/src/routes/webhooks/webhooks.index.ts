import { createRouter } from '../../http/router.js';
import * as handlers from './webhooks.handlers.js';
import * as routes from './webhooks.routes.js';

export const webhooksRouter = createRouter()
  .openapi(routes.webhooksEndpointsList, handlers.webhooksEndpointsList)
  .openapi(routes.webhooksEndpointsCreate, handlers.webhooksEndpointsCreate)
  .openapi(routes.webhooksEndpointsGet, handlers.webhooksEndpointsGet)
  .openapi(routes.webhooksEndpointsUpdate, handlers.webhooksEndpointsUpdate)
  .openapi(routes.webhooksEndpointsDelete, handlers.webhooksEndpointsDelete)
  .openapi(routes.webhooksEndpointsRotateSecret, handlers.webhooksEndpointsRotateSecret)
  .openapi(routes.webhooksEndpointsTest, handlers.webhooksEndpointsTest)
  .openapi(routes.webhooksEndpointsReplay, handlers.webhooksEndpointsReplay)
  .openapi(routes.webhooksEndpointsDeliveries, handlers.webhooksEndpointsDeliveries);
