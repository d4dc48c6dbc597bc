// createApp wires middleware, error handling and the route groups. It does no I/O at import and
// takes every dependency as an argument, so tests build a fresh app around a fresh database.

import type { OpenAPIHono } from '@hono/zod-openapi';
import pino, { type Logger } from 'pino';
import type { Db } from './db/engine/client.js';
import type { EventReaders } from './runtime/event-readers.js';
import type { IdempotencyTimes } from './db/repositories/idempotency.js';
import { DEFAULT_CONFIG, idempotencyTimesOf } from './config.js';
import { pingDb } from './db/engine/health.js';
import spec from './generated/openapi.json' with { type: 'json' };
import { registerSpecComponents } from './generated/routes.js';
import type { AppEnv } from './http/app-env.js';
import { authenticate, authorize } from './http/auth.js';
import { Admission, noQueueWaitYet } from './http/admission.js';
import { EventStreams } from './http/event-stream.js';
import { ApiError, errorResponse, handleError } from './http/errors.js';
import { Metrics, metricsEndpoint } from './http/metrics.js';
import { idempotency } from './http/idempotency.js';
import { authFailureLimit, type AuthFailureLimit } from './http/rate-limit.js';
import { fleetRateLimit } from './http/fleet-rate-limit.js';
import {
  queryStringLimit,
  rejectInvalidUtf8InQuery,
  rejectNulInQuery,
  requestBody,
} from './http/request-body.js';
import { requestContext } from './http/request-context.js';
import { replicaReads } from './http/replica-routing.js';
import type { ReplicaReads } from './runtime/replica-reads.js';
import { KeptAnswers } from './runtime/kept-answers.js';
import { createRouter } from './http/router.js';
import { docsRouter } from './routes/docs/docs.index.js';
import { consoleRouter } from './routes/console/console.index.js';
import { eventsRouter } from './routes/events/events.index.js';
import { promptsRouter } from './routes/prompts/prompts.index.js';
import { telephonyRouter } from './routes/telephony/telephony.index.js';
import { experimentsRouter } from './routes/experiments/experiments.index.js';
import { sessionsRouter } from './routes/sessions/sessions.index.js';
import { directoryRouter } from './routes/directory/directory.index.js';
import { webhooksRouter } from './routes/webhooks/webhooks.index.js';
import { keysRouter } from './routes/keys/keys.index.js';
import type { WebhookTargetPolicy } from './domain/webhooks.js';

export interface AppOptions {
  db: Db;
  logger?: Logger;
  /** Largest accepted request body in bytes (config.ts's default). */
  bodyLimitBytes?: number;
  /** Requests per API key per minute; absent or 0 means no limit (the default of tests). */
  rateLimitPerMinute?: number;
  /** Requests one API key may have in progress at once (the others wait); absent or 0: no limit. */
  concurrentRequestsPerKey?: number;
  /** Of those, list reads that run at once (the others wait); absent or 0: no limit. */
  concurrentListReadsPerKey?: number;
  /** Requests of one key that may wait for a slot at once (config.ts's default). */
  queuedRequestsPerKey?: number;
  /** How long a request may wait for a slot (config.ts's default). */
  queueWaitMs?: number;
  /** The server processes on the database, between which the per-key shares are divided. */
  fleetSize?: () => number;
  /** How long Idempotency-Key answers are kept and claims are leased (config.ts's defaults). */
  idempotencyTimes?: IdempotencyTimes;
  /** Failed authentications per client address and per key id a minute; absent means no limit. */
  authFailureLimit?: AuthFailureLimit;
  metrics?: Metrics;
  /** The bearer token /metrics requires; without one /metrics is a 404. */
  metricsToken?: string;
  /** SQLite's reader threads for the events list (main.ts starts them); absent: it reads inline. */
  eventReaders?: EventReaders;
  /** The process's event streams; main.ts makes them to close them on shutdown. Absent: one of
   * EVENT_STREAMS_PER_KEY's default streams per key, made here. */
  eventStreams?: EventStreams;
  /** The kept list answers (versioned-cache.ts). Absent: KEPT_ANSWERS_MAX_BYTES's default budget. */
  keptAnswers?: KeptAnswers;
  /** The streaming replica that serves list reads (DATABASE_READ_URL); absent: the primary does. */
  replica?: ReplicaReads;
  /** Where webhook URLs may point (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES; both off by default). */
  webhookPolicy?: WebhookTargetPolicy;
}

export type App = OpenAPIHono<AppEnv>;

/** Enough for every list parameter many times over (Node itself refuses headers over 16 KiB). */
const MAX_QUERY_STRING_CHARACTERS = 8192;

export function createApp({
  db,
  logger = pino({ level: 'silent' }),
  bodyLimitBytes = DEFAULT_CONFIG.bodyLimitBytes,
  rateLimitPerMinute = 0,
  concurrentRequestsPerKey = 0,
  concurrentListReadsPerKey = 0,
  queuedRequestsPerKey = DEFAULT_CONFIG.queuedRequestsPerKey,
  queueWaitMs = DEFAULT_CONFIG.queueWaitMs,
  fleetSize,
  authFailureLimit: authFailures,
  idempotencyTimes = idempotencyTimesOf(DEFAULT_CONFIG),
  metrics = new Metrics(),
  metricsToken,
  eventReaders,
  replica,
  eventStreams = new EventStreams(db, { perKey: DEFAULT_CONFIG.eventStreamsPerKey, replica }),
  keptAnswers = new KeptAnswers({ maxBytes: DEFAULT_CONFIG.keptAnswersMaxBytes }),
  webhookPolicy = {
    allowHttp: DEFAULT_CONFIG.webhookAllowHttp,
    allowPrivateAddresses: DEFAULT_CONFIG.webhookAllowPrivateAddresses,
  },
}: AppOptions): App {
  const app = createRouter();

  app.use(requestContext(db, logger, metrics, keptAnswers));
  app.use('/api/v1/events/*', async (c, next) => {
    if (eventReaders) c.set('eventReaders', eventReaders);
    c.set('eventStreams', eventStreams);
    await next();
  });
  app.use('/api/v1/webhooks/*', async (c, next) => {
    c.set('webhookPolicy', webhookPolicy);
    await next();
  });
  app.use('/api/*', queryStringLimit(MAX_QUERY_STRING_CHARACTERS));
  app.use('/api/*', rejectNulInQuery());
  app.use('/api/*', rejectInvalidUtf8InQuery());

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await pingDb(c.get('db'));
      return c.json({ status: 'ready' });
    } catch {
      return c.json({ status: 'unavailable', detail: 'The database does not answer.' }, 503);
    }
  });
  app.get('/openapi.json', (c) => c.json(spec));
  app.route('/', docsRouter);
  app.route('/', consoleRouter());
  if (metricsToken) app.get('/metrics', metricsEndpoint(metrics, metricsToken));

  // Who is calling comes first: nothing of a body is read or parsed for a caller without a key.
  const failures =
    authFailures && authFailures.perMinute > 0 ? authFailureLimit(authFailures) : undefined;
  app.use('/api/v1/*', noQueueWaitYet);
  app.use('/api/v1/*', authenticate(failures));
  if (rateLimitPerMinute > 0) app.use('/api/v1/*', fleetRateLimit(db, rateLimitPerMinute));
  // Then may they do this: a key that may not costs no body read, parse or idempotency row,
  // nor a place in its key's queue.
  app.use('/api/v1/*', authorize);
  // Then its turn: the operation tells a list read from other requests, and the body is read
  // only once the request runs.
  if (concurrentRequestsPerKey > 0 || concurrentListReadsPerKey > 0) {
    const admission = new Admission({
      requestsPerKey: concurrentRequestsPerKey,
      listReadsPerKey: concurrentListReadsPerKey,
      queuedPerKey: queuedRequestsPerKey,
      queueWaitMs,
      fleetSize,
    });
    app.use('/api/v1/*', admission.middleware());
    if (fleetSize) {
      metrics.gauge(
        'agentline_fleet_processes',
        'Server processes on the database at the last heartbeat, between which the per-key shares are divided.',
        fleetSize,
      );
    }
    metrics.gauge(
      'agentline_admission_running_requests',
      "Requests in progress under a key's share (CONCURRENT_REQUESTS_PER_KEY), all keys together.",
      () => admission.running,
    );
    metrics.gauge(
      'agentline_admission_waiting_requests',
      "Requests waiting in their key's queue for a slot (QUEUED_REQUESTS_PER_KEY), all keys together.",
      () => admission.waiting,
    );
  }
  // Then its database, once it has its turn: the list reads in progress on each side choose it
  // (runtime/replica-reads.ts).
  if (replica) {
    app.use('/api/v1/*', replicaReads(replica));
    metrics.gauge(
      'agentline_replica_lag_seconds',
      'How far behind the primary the read replica has been measured (DATABASE_READ_URL).',
      () => replica.lagMs / 1000,
    );
    metrics.counter(
      'agentline_replica_reads_total',
      'List reads and stream replays the read replica served.',
      () => replica.served.replica,
    );
    metrics.counter(
      'agentline_replica_balanced_reads_total',
      'List reads and stream replays the replica could have served, sent to the primary because it had fewer list reads in progress.',
      () => replica.served.balanced,
    );
    metrics.counter(
      'agentline_replica_behind_reads_total',
      'List reads and stream replays the primary served because the replica had not replayed what they must see (a key that wrote, the lag bound).',
      () => replica.served.behind,
    );
  }
  app.use('/api/v1/*', requestBody(bodyLimitBytes));
  // Only a POST takes an Idempotency-Key: no other request enters its middleware.
  app.on('POST', '/api/v1/*', idempotency(idempotencyTimes));
  registerSpecComponents(app);
  for (const router of [
    eventsRouter,
    promptsRouter,
    telephonyRouter,
    experimentsRouter,
    sessionsRouter,
    directoryRouter,
    webhooksRouter,
    keysRouter,
  ]) {
    app.route('/', router);
  }

  app.notFound((c) =>
    errorResponse(
      c,
      new ApiError(
        'NOT_FOUND',
        `No route ${c.req.method} ${c.req.path}; see /openapi.json for the API.`,
      ),
    ),
  );
  app.onError(handleError);
  return app;
}
