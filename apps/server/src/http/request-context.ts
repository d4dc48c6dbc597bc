// Request ids, security headers, one structured access-log line and the request metrics per
// request. Headers are never logged, so API keys and provider credentials cannot leak through here.

import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { Db } from '../db/engine/client.js';
import type { AppEnv } from './app-env.js';
import type { Metrics } from './metrics.js';
import type { KeptAnswers } from '../runtime/kept-answers.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: a safe incoming `X-Request-Id` as it is, else a new one. */
export function requestIdOf(incoming: string | undefined): string {
  return incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * The SDK numbers each attempt of a call (0 first); logged so retries can be told apart. Only a
 * small integer is logged: the log takes nothing a client wrote as it came.
 */
function retryCount(header: string | undefined): number | undefined {
  return header !== undefined && /^\d{1,3}$/.test(header) ? Number(header) : undefined;
}

// What a JSON API needs of the usual security headers: no sniffing, no framing, no referrers,
// HTTPS only once a client has seen it over TLS.
export const SECURITY_HEADERS = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
] as const;

/**
 * A header of every answer (X-Request-Id, the security headers), set before the response exists (changing a finished
 * response's headers makes the Node adapter rebuild it as a full Web Response). Served through
 * Node, they go on Node's own response, which the answer's headers are merged into: on the Web
 * Response they would give every answer a Headers object that the adapter then copies out name by
 * name, a cost larger than the request's routing (docs/benchmarks.md). In process (app.request)
 * there is only the Web Response.
 */
export function setEnvelopeHeader(c: Context<AppEnv>, name: string, value: string): void {
  const outgoing = c.env?.outgoing;
  if (outgoing) outgoing.setHeader(name, value);
  else c.header(name, value);
}

function setEnvelopeHeaders(c: Context<AppEnv>, requestId: string): void {
  setEnvelopeHeader(c, 'X-Request-Id', requestId);
  for (const [name, value] of SECURITY_HEADERS) setEnvelopeHeader(c, name, value);
}

/** The process's logger with the request's id on every line (for the rare lines beyond the access log). */
export function requestLogger(c: Context<AppEnv>): Logger {
  return c.get('logger').child({ request_id: c.get('requestId') });
}

export function requestContext(
  db: Db,
  logger: Logger,
  metrics: Metrics,
  keptAnswers: KeptAnswers,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const requestId = requestIdOf(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('logger', logger);
    c.set('db', db);
    c.set('metrics', metrics);
    c.set('keptAnswers', keptAnswers);
    setEnvelopeHeaders(c, requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const auth = c.get('auth');
      const durationMs = performance.now() - started;
      // Outside /api/v1 there is no operation id; the matched route pattern keeps the label set
      // as small as the route table, whatever paths clients send.
      metrics.recordRequest(
        c.get('operationId') ?? c.req.routePath,
        c.res.status,
        durationMs / 1000,
      );
      logger.info(
        {
          request_id: requestId,
          method: c.req.method,
          path: c.req.path,
          operation: c.get('operationId'),
          organization_id: auth?.organizationId,
          key_id: auth?.keyId,
          retry_count: retryCount(c.req.header('agentline-retry-count')),
          status: c.res.status,
          duration_ms: Math.round(durationMs * 100) / 100,
        },
        'request',
      );
    }
  };
}
