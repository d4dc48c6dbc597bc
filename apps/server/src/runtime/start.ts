// What a server process runs beside its requests, started in one call and stopped in one:
// the fleet heartbeat, SQLite's events reader threads, the read replica's probes, the periodic
// jobs and the webhook delivery thread. main.ts starts it before serving and stops it on SIGTERM.

import type { Logger } from 'pino';
import { idempotencyTimesOf, type Config } from '../config.js';
import type { Db } from '../db/engine/client.js';
import { eventReadersFor, type EventReaders } from './event-readers.js';
import { FleetMembers } from './fleet-members.js';
import { KeptAnswers } from './kept-answers.js';
import { periodicJobs, startPeriodicJob } from './periodic-jobs.js';
import { ReplicaReads } from './replica-reads.js';
import { startWebhookDelivery } from './webhooks/delivery-thread.js';

export interface Runtime {
  eventReaders: EventReaders | undefined;
  replica: ReplicaReads | undefined;
  keptAnswers: KeptAnswers;
  /** The server processes sharing the database, this one included. */
  fleetSize: () => number;
  /**
   * Stops the periodic jobs and the webhook delivery at once; once `requestsDone` (the server
   * closed), leaves the fleet and closes the reader threads and the replica.
   */
  stop(requestsDone: Promise<void>): Promise<void>;
}

export async function startRuntime(db: Db, config: Config, logger: Logger): Promise<Runtime> {
  const replica = await openReplica(db, config);
  const members = new FleetMembers(db);
  await members.start();
  const eventReaders = eventReadersFor(db, config.databaseUrl, config.sqliteReaderThreads);
  const stopJobs = periodicJobs(db, logger, {
    idempotencyTimes: idempotencyTimesOf(config),
    eventRetentionDays: config.eventRetentionDays,
  }).map((job) => startPeriodicJob(logger, job));
  const webhooks = startWebhookDelivery(db, logger, {
    databaseUrl: config.databaseUrl,
    listQueryTimeoutMs: config.listQueryTimeoutMs,
    logLevel: config.logLevel,
    dispatcher: {
      leaseMs: config.webhookLeaseMs,
      retrySchedule: config.webhookRetrySchedule,
      targets: {
        allowHttp: config.webhookAllowHttp,
        allowPrivateAddresses: config.webhookAllowPrivateAddresses,
      },
    },
  });
  return {
    eventReaders,
    replica,
    keptAnswers: new KeptAnswers({ maxBytes: config.keptAnswersMaxBytes }),
    fleetSize: () => members.count,
    async stop(requestsDone) {
      for (const stop of stopJobs) stop();
      // Attempts in flight get a moment; the endpoints' positions are stored and their leases
      // given up, so another process delivers on at once.
      await Promise.all([webhooks.stop(), requestsDone]);
      await members.stop();
      await Promise.all([eventReaders?.close(), replica?.close()]);
    },
  };
}

/** The read replica of DATABASE_READ_URL, checked and measured once before serving. */
async function openReplica(db: Db, config: Config): Promise<ReplicaReads | undefined> {
  if (!config.databaseReadUrl || db.kind !== 'postgres') return undefined;
  const replica = new ReplicaReads(db, config.databaseUrl, config.databaseReadUrl, {
    maxLagMs: config.replicaMaxLagMs,
    poolSize: config.databasePoolSize,
  });
  try {
    await replica.start();
  } catch (error) {
    await replica.close();
    throw error;
  }
  return replica;
}
