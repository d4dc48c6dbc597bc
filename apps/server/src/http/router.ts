// What every route area builds its router with: an OpenAPIHono of the app's environment whose
// validation failures become the contract's 422, and the type of a handler of one generated
// route. Route areas import this, never app.ts, which mounts their routers.

import { OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from './app-env.js';
import { problemsOfZodError, RequestValidationError } from './errors.js';

export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        // @hono/zod-validator passes the validated input as `data` on failures too; its type
        // leaves it out. Thrown, so that onError answers and the idempotency middleware can tell
        // a request refused before its handler ran.
        const input = (result as { data?: unknown }).data;
        throw new RequestValidationError(problemsOfZodError(result.error, result.target, input));
      }
    },
  });
}

/** The handler of route `R`, with the app's context. */
export type AppRouteHandler<R extends RouteConfig> = RouteHandler<R, AppEnv>;
