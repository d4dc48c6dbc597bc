// The webhook thread itself (started by delivery-thread.ts): its own database connection and
// logger, one dispatcher, stopped when the main thread says so.

import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { createDb, prepareServerConnection } from '../../db/engine/client.js';
import { WebhookDispatcher } from './dispatcher.js';
import { WEBHOOKS_APPLICATION_NAME, type DeliveryThreadData } from './delivery-thread.js';

/** PostgreSQL connections of the thread: the dispatcher's reads and writes are short and few. */
const THREAD_POOL_SIZE = 4;

const data = workerData as DeliveryThreadData;
// A write per line, each under the pipe's atomic size, so that lines never interleave with the
// main thread's buffered ones; the dispatcher logs seldom (warnings, disabled endpoints).
const logger = pino(
  { level: data.logLevel, base: { service: 'agentline', thread: 'webhooks' } },
  pino.destination({ dest: 1, sync: true }),
);
const db = createDb(data.databaseUrl, {
  poolSize: THREAD_POOL_SIZE,
  applicationName: WEBHOOKS_APPLICATION_NAME,
  listQueryTimeoutMs: data.listQueryTimeoutMs,
});
prepareServerConnection(db);
const dispatcher = new WebhookDispatcher({ db, logger, ...data.dispatcher });
dispatcher.start();
parentPort!.postMessage('running');

parentPort!.once('message', () => {
  void dispatcher
    .stop()
    .then(() => db.close())
    .finally(() => parentPort!.postMessage('stopped'));
});
