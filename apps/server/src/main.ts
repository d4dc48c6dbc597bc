// Process entry: read config, open and migrate the database, serve, and shut down gracefully
// (stop accepting, finish in-flight requests, close the database) on SIGTERM or SIGINT.

import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp } from './app.js';
import { ConfigError, idempotencyTimesOf, loadConfig } from './config.js';
import { createDb, prepareServerConnection } from './db/engine/client.js';
import { migrateDb } from './db/migrate.js';
import { EventStreams } from './http/event-stream.js';
import { createFrontDoor } from './http/front-door.js';
import { startRuntime } from './runtime/start.js';

const SHUTDOWN_GRACE_MS = 10_000;
// Log lines are collected and written to stdout together, by libuv's threads, once 8 KiB are
// waiting and at least every 100 ms: with a write() per access line on the event loop, a slow
// reader of stdout (a stalled log collector) would stall every request. pino writes out what is
// left when the process exits; a killed process loses at most its last 100 ms of lines.
const LOG_OUTPUT = { dest: 1, sync: false, minLength: 8192, periodicFlush: 100 };
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = pino(
    { level: config.logLevel, base: { service: 'agentline' } },
    pino.destination(LOG_OUTPUT),
  );
  const db = createDb(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    listQueryTimeoutMs: config.listQueryTimeoutMs,
  });
  await migrateDb(db);
  prepareServerConnection(db);
  const runtime = await startRuntime(db, config, logger);
  const eventStreams = new EventStreams(db, {
    perKey: config.eventStreamsPerKey,
    bufferBytes: config.eventStreamBufferBytes,
    readers: runtime.eventReaders,
    replica: runtime.replica,
  });
  const app = createApp({
    db,
    eventReaders: runtime.eventReaders,
    replica: runtime.replica,
    eventStreams,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    rateLimitPerMinute: config.rateLimitPerMinute,
    concurrentRequestsPerKey: config.concurrentRequestsPerKey,
    concurrentListReadsPerKey: config.concurrentListReadsPerKey,
    queuedRequestsPerKey: config.queuedRequestsPerKey,
    queueWaitMs: config.queueWaitMs,
    fleetSize: runtime.fleetSize,
    idempotencyTimes: idempotencyTimesOf(config),
    webhookPolicy: {
      allowHttp: config.webhookAllowHttp,
      allowPrivateAddresses: config.webhookAllowPrivateAddresses,
    },
    authFailureLimit: {
      perMinute: config.authFailuresPerMinute,
      trustedProxies: config.trustedProxies,
    },
    metricsToken: config.metricsToken,
    keptAnswers: runtime.keptAnswers,
  });
  const server = createFrontDoor({
    fetch: app.fetch,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    hostname: config.host,
    // A client that trickles its headers or body cannot hold a connection for long (Node
    // checks the timeouts every connectionsCheckingInterval, 30 s by default).
    serverOptions: {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 2_000,
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(listenFailure(error, config.host, config.port))),
    );
    server.listen(config.port, config.host, resolve);
  });
  const info = server.address() as AddressInfo;
  logger.info(
    { address: info.address, port: info.port, database: db.kind },
    `Agentline listening on http://${info.address}:${info.port} (API reference: /docs)`,
  );
  // Whoever started the process waits for this line.
  logger.flush();

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn('in-flight requests did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    void runtime
      .stop(closed.then(() => eventStreams.releaseSlots()))
      .then(() => db.close())
      .finally(() => {
        logger.info('stopped');
        // pino writes what is left synchronously at exit; a batch still being written by
        // libuv's thread would land after it, so exit once that write has drained.
        logger.flush(() => process.exit(0));
      });
    // Event streams never finish by themselves: each ends cleanly (its client reconnects with
    // its last id, to another process), and its connection then goes idle, or is cut a second
    // later if its client stopped reading (http/stream-connections.ts).
    logger.info({ streams: eventStreams.size }, 'closing event streams');
    eventStreams.close();
    // Idle keep-alive connections would otherwise hold close() open until they time out; a
    // stream's connection turns idle once its last bytes are written.
    server.closeIdleConnections();
    setTimeout(() => server.closeIdleConnections(), 100).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** Why the server could not listen, and what to change. */
function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `${host}:${port} is already in use by another process; stop it, or set PORT to a free port (0 picks one)`;
    case 'EACCES':
      return `this user may not listen on ${host}:${port}; set PORT above 1023`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine; set HOST to one of its addresses (127.0.0.1, 0.0.0.0)`;
    default:
      return `cannot listen on ${host}:${port}: ${error.message}`;
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(`agentline: invalid configuration: ${error.message}`);
  } else {
    console.error(
      `agentline: could not start: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  process.exit(1);
});
