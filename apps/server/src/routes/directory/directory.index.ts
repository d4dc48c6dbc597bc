import { areaRouter } from '../area-router.js';
import * as handlers from './directory.handlers.js';
import * as routes from './directory.routes.js';

export const directoryRouter = areaRouter(routes, handlers);
