// Authentication (who is calling: 401) and authorization (may they do this: 403), in that order
// and before any input validation, so a caller without access learns nothing about the input.

import type { Context, MiddlewareHandler } from 'hono';
import {
  apiKeyUseIsStale,
  authenticateApiKey,
  recordApiKeyUse,
} from '../db/repositories/api-keys.js';
import { parseApiKey } from '../domain/api-keys.js';
import type { Permission } from '../domain/permissions.js';
import type { AppEnv } from './app-env.js';
import { ApiError } from './errors.js';

export const API_KEY_HEADER = 'Service-API-Key';

function unauthenticated(detail: string) {
  return new ApiError(401, 'UNAUTHENTICATED', detail, {
    'WWW-Authenticate': `ApiKey header="${API_KEY_HEADER}"`,
  });
}

/** `onFailure` hears of every 401 given here (the failed-authentication limit counts them). */
export function authenticate(
  onFailure: (c: Context<AppEnv>) => void = () => {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    try {
      await authenticateRequest(c);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) onFailure(c);
      throw error;
    }
    await next();
  };
}

async function authenticateRequest(c: Context<AppEnv>): Promise<void> {
  const presented = c.req.header(API_KEY_HEADER);
  if (!presented) {
    throw unauthenticated(
      `Send your API key in the ${API_KEY_HEADER} header; an operator creates one with "agentline key create".`,
    );
  }
  const parsed = parseApiKey(presented.trim());
  if (!parsed) {
    throw unauthenticated(
      `The ${API_KEY_HEADER} header is not an Agentline API key (expected agl_<key id>_<secret>).`,
    );
  }
  const principal = await authenticateApiKey(c.get('db'), presented.trim());
  // Unknown, wrong-secret and revoked keys get the same answer, so the answer reveals nothing
  // about which key ids exist.
  if (!principal) {
    throw unauthenticated(
      'This API key is unknown or has been revoked; ask an operator for a valid key.',
    );
  }
  // Checked in memory first, so most requests stay read-only.
  if (apiKeyUseIsStale(principal.lastUsedAt))
    await recordApiKeyUse(c.get('db'), principal.apiKeyId);
  c.set('auth', {
    organizationId: principal.organizationId,
    keyId: principal.keyId,
    keyName: principal.keyName,
    permissions: new Set(principal.permissions),
  });
}

/** An operation of the spec, as generated: its id and the permission it needs. */
export interface PermissionedRoute {
  operationId: string;
  'x-agentline-permission': Permission;
}

/**
 * Route middleware: the key's role must hold the permission the spec names for the operation
 * (`x-agentline-permission`), the one place that rule is written.
 */
export function requirePermission({
  operationId,
  'x-agentline-permission': permission,
}: PermissionedRoute): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('operationId', operationId);
    if (!c.get('auth').permissions.has(permission)) {
      throw new ApiError(
        403,
        'PERMISSION_DENIED',
        `This API key's role lacks the ${permission} permission, which ${operationId} needs; ask an operator to add it to the role or use another key.`,
      );
    }
    await next();
  };
}
