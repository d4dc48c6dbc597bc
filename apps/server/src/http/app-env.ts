// What every request handler can rely on finding in the Hono context.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Db } from '../db/engine/client.js';
import type { EventReaders } from '../runtime/event-readers.js';
import type { IdempotentWrite } from '../db/repositories/idempotency.js';
import type { Permission } from '../vocabulary/permissions.js';
import type { WebhookTargetPolicy } from '../domain/webhooks.js';
import type { EventStreams } from './event-stream.js';
import type { Metrics } from './metrics.js';
import type { KeptAnswers } from '../runtime/kept-answers.js';

export interface AuthContext {
  organizationId: number;
  /** The public part of the key (`agl_<key id>_...`): safe to log. */
  keyId: string;
  /** The key's label, recorded as `last_updated_by` on what it writes. */
  keyName: string;
  permissions: ReadonlySet<Permission>;
}

export interface AppEnv {
  /** Set by @hono/node-server; absent for in-process requests (`app.request` in tests). */
  Bindings: { incoming?: IncomingMessage; outgoing?: ServerResponse };
  Variables: {
    requestId: string;
    /** The process's logger; requestLogger (request-context.ts) adds the request id. */
    logger: Logger;
    db: Db;
    /** Where handlers count what /metrics reports beyond requests (routed sessions). */
    metrics: Metrics;
    /** The finished list answers the app keeps, within its byte budget (versioned-cache.ts). */
    keptAnswers: KeptAnswers;
    /** Set by the authentication middleware on every /api/v1 request it lets through. */
    auth: AuthContext;
    /** The operation being served, for logs (set by the permission middleware). */
    operationId: string;
    /** SQLite's reader threads for the events list, when the server started them. */
    eventReaders?: EventReaders;
    /** The process's event streams (GET /api/v1/events/stream), set for every events route. */
    eventStreams: EventStreams;
    /** Where webhooks may go (the operator's settings), set for every webhooks route. */
    webhookPolicy: WebhookTargetPolicy;
    /** A POST with an Idempotency-Key that may run: where its answer goes (http/idempotency.ts). */
    idempotentWrite?: IdempotentWrite;
  };
}
