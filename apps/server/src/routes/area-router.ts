// An area's router: each route of its routes module served by the handler of the same name, so
// an operation is paired with its handler by name alone, and a route without one does not compile.

import type { OpenAPIHono, RouteConfig } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { createRouter, type AppRouteHandler } from '../http/router.js';

export function areaRouter<R extends Record<string, RouteConfig>>(
  routes: R,
  handlers: { [K in keyof R]: AppRouteHandler<R[K]> },
): OpenAPIHono<AppEnv> {
  const router = createRouter();
  for (const name of Object.keys(routes)) router.openapi(routes[name]!, handlers[name]!);
  return router;
}
