import type { App } from '../../app.js';
import * as handlers from './prompts.handlers.js';
import * as routes from './prompts.routes.js';

export function registerPromptsRoutes(app: App): void {
  app.openapi(routes.promptsList, handlers.promptsList);
}
