import { createRouter } from '../../http/router.js';
import * as handlers from './keys.handlers.js';
import * as routes from './keys.routes.js';

export const keysRouter = createRouter().openapi(routes.keysCurrent, handlers.keysCurrent);
