import { createRoute } from '@hono/zod-openapi';
import { createRouter } from '../../http/router.js';
import * as handlers from './prompts.handlers.js';
import * as routes from './prompts.routes.js';

export const promptsRouter = createRouter().openapi(
  createRoute({ ...routes.promptsList, middleware: [handlers.keptPromptsAnswer] }),
  handlers.promptsList,
);
