// Authentication (who is calling: 401) and authorization (may they do this: 403), in that order
// and before any input validation, so a caller without access learns nothing about the input.

import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { parseApiKey } from '../domain/api-keys.js';
import { routes } from '../generated/routes.js';
import { authenticateApiKeyTrusted, noteApiKeyUse } from '../use-cases/authentication.js';
import { NO_PERMISSION } from '../vocabulary/permissions.js';
import type { AppEnv } from './app-env.js';
import { ApiError } from './errors.js';
import type { AuthFailureLimiter } from './rate-limit.js';

export const API_KEY_HEADER = 'Service-API-Key';

function unauthenticated(detail: string) {
  return new ApiError('UNAUTHENTICATED', detail, {
    'WWW-Authenticate': `ApiKey header="${API_KEY_HEADER}"`,
  });
}

/** The one answer to an unknown, wrong-secret or revoked key, wherever it is found to be one. */
export function unknownOrRevokedKey(): ApiError {
  return unauthenticated(
    'This API key is unknown or has been revoked; ask an operator for a valid key.',
  );
}

/**
 * Who is calling. With `failures`, a request whose address or presented key id has used up its
 * failed authentications is a 429 instead of a 401: at once when it has no well-formed key (nothing
 * is looked up), and only after the key failed when it has one, so a valid key is never refused
 * for what other clients at its address did (see authFailureLimit).
 */
export function authenticate(failures?: AuthFailureLimiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await authenticateRequest(c, failures);
    await next();
  };
}

async function authenticateRequest(
  c: Context<AppEnv>,
  failures: AuthFailureLimiter | undefined,
): Promise<void> {
  const presented = c.req.header(API_KEY_HEADER)?.trim();
  const parsed = presented ? parseApiKey(presented) : null;
  // The budgets are looked up only for a request that fails: a valid key never needs them.
  if (!presented || !parsed) {
    const budget = failures?.budget(c, undefined);
    if (budget?.refusal) throw budget.refusal;
    budget?.recordFailure();
    throw unauthenticated(
      presented
        ? `The ${API_KEY_HEADER} header is not an Agentline API key (expected agl_<key id>_<secret>).`
        : `Send your API key in the ${API_KEY_HEADER} header; an operator creates one with "agentline key create".`,
    );
  }
  const principal = await authenticateApiKeyTrusted(c.get('db'), presented);
  // Unknown, wrong-secret and revoked keys get the same answer, so the answer reveals nothing
  // about which key ids exist.
  if (!principal) {
    const budget = failures?.budget(c, parsed.keyId);
    budget?.recordFailure();
    if (budget?.refusal) throw budget.refusal;
    throw unknownOrRevokedKey();
  }
  await noteApiKeyUse(c.get('db'), principal);
  c.set('auth', {
    organizationId: principal.organizationId,
    keyId: principal.keyId,
    keyName: principal.keyName,
    permissions: new Set(principal.permissions),
  });
}

/** Each operation of the spec, as generated, by its method and Hono route path. */
const OPERATIONS = new Map(
  Object.values(routes).map((route) => [
    `${route.method.toUpperCase()} ${route.path.replace(/\{([^}]+)\}/g, ':$1')}`,
    route,
  ]),
);

/**
 * Runs after authentication and before anything reads the body: names the operation the request
 * matched (for logs and metrics) and requires the permission the spec gives it in
 * `x-agentline-permission`, the one place that rule is written (`none`: any valid key). A path
 * that matches no operation passes on to the 404.
 */
export const authorize: MiddlewareHandler<AppEnv> = async (c, next) => {
  const matched = matchedRoutes(c).at(-1);
  const operation = matched && OPERATIONS.get(`${matched.method} ${matched.path}`);
  if (operation) {
    const { operationId, 'x-agentline-permission': permission } = operation;
    c.set('operationId', operationId);
    if (permission !== NO_PERMISSION && !c.get('auth').permissions.has(permission)) {
      throw new ApiError(
        'PERMISSION_DENIED',
        `This API key's role lacks the ${permission} permission, which ${operationId} needs; ask an operator to add it to the role or use another key.`,
      );
    }
  }
  await next();
};
