// Request ids and one structured access-log line per request. Headers are never logged, so API
// keys and provider credentials cannot leak through here.

import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import type { AppEnv } from './app-env.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContext(db: Db, logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const requestLogger = logger.child({ request_id: requestId });
    c.set('requestId', requestId);
    c.set('logger', requestLogger);
    c.set('db', db);
    const started = performance.now();
    try {
      await next();
    } finally {
      c.header('X-Request-Id', requestId);
      const auth = c.get('auth');
      requestLogger.info(
        {
          method: c.req.method,
          path: c.req.path,
          operation: c.get('operationId'),
          organization_id: auth?.organizationId,
          key_id: auth?.keyId,
          status: c.res.status,
          duration_ms: Math.round((performance.now() - started) * 100) / 100,
        },
        'request',
      );
    }
  };
}
