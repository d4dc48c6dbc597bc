// The webhook thread (delivery-thread-entry.ts): the dispatcher of a server process runs there,
// beside the API and not on its event loop, with a database connection of its own. Delivering
// thousands of messages a second (HTTP requests, signatures, the delivery log) then does not
// hold up the API's answers in the same process. runtime/start.ts starts it and stops it; the
// thread itself starts once the database holds an endpoint.

import type { Logger } from 'pino';
import type { Db } from '../../db/engine/client.js';
import { anyWebhookEndpoint } from '../../db/repositories/webhook-dispatch.js';
import { startModuleThread } from '../module-thread.js';
import { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js';

/** What the thread is started with: how to open the database, and the dispatcher's settings. */
export interface DeliveryThreadData {
  databaseUrl: string;
  listQueryTimeoutMs: number;
  logLevel: string;
  dispatcher: Pick<DispatcherOptions, 'leaseMs' | 'retrySchedule' | 'targets'>;
}

export interface WebhookDelivery {
  /** Stores positions and gives up leases (WebhookDispatcher.stop), then ends the thread. */
  stop(): Promise<void>;
}

/** How `pg_stat_activity` names the thread's connections, apart from the API's (`agentline`). */
export const WEBHOOKS_APPLICATION_NAME = 'agentline webhooks';

/** An unexpected end of the thread is followed by a new one after this long. */
const RESTART_AFTER_MS = 1000;
/**
 * How often a process without its thread looks for a first endpoint. The thread is a fifth to a
 * third of a process's start-up CPU (docs/benchmarks.md, "Figures behind the code"), which the
 * processes of a deployment without webhooks, and most of the test suite's, would spend for
 * nothing; the first endpoint's first message waits this long at most, beside its retry
 * schedule of seconds.
 */
const LOOK_EVERY_MS = 500;

/**
 * Starts delivering webhooks for this process: in a thread once `db` holds an endpoint, or on
 * this event loop for a `:memory:` SQLite database (it exists in `db`'s connection only, nothing
 * another could open).
 */
export function startWebhookDelivery(
  db: Db,
  logger: Logger,
  data: DeliveryThreadData,
): WebhookDelivery {
  if (data.databaseUrl === ':memory:') {
    const dispatcher = new WebhookDispatcher({ db, logger, ...data.dispatcher });
    dispatcher.start();
    return { stop: () => dispatcher.stop() };
  }
  let stopping = false;
  let thread: ReturnType<typeof start> | undefined;
  let looking: Promise<void> | undefined;
  const look = () => {
    looking ??= anyWebhookEndpoint(db)
      .then(
        (found) => {
          // One look at a time, and none after the first find: the watch stops with it.
          if (!found || stopping) return;
          clearInterval(watch);
          thread = start();
        },
        (error: unknown) => {
          if (!stopping) logger.warn({ err: error }, 'could not look for webhook endpoints');
        },
      )
      .finally(() => (looking = undefined));
  };
  const watch = setInterval(look, LOOK_EVERY_MS);
  look();
  function start() {
    const worker = startModuleThread('./delivery-thread-entry', import.meta.url, data);
    let running = false;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const loaded = new Promise<void>((resolve) =>
      worker.on('message', (message) => {
        if (message !== 'running') return;
        running = true;
        logger.info('the webhook thread is running');
        resolve();
      }),
    );
    const stopped = new Promise<void>((resolve) =>
      worker.on('message', (message) => message === 'stopped' && resolve()),
    );
    worker.on('error', (error) => logger.error({ err: error }, 'the webhook thread failed'));
    void ended.then(() => {
      if (stopping) return;
      // A thread that could not even start would fail again: no endless restarts. Other
      // processes take this one's endpoints over once their leases lapse.
      if (!running) {
        logger.error('the webhook thread could not start; this process delivers no webhooks');
        return;
      }
      logger.warn('the webhook thread ended; starting another');
      setTimeout(() => {
        if (!stopping) thread = start();
      }, RESTART_AFTER_MS).unref();
    });
    return { worker, ended, loaded, stopped, running: () => running };
  }
  return {
    stop: async () => {
      stopping = true;
      clearInterval(watch);
      await looking;
      if (!thread) return;
      const { worker, ended, loaded, stopped, running } = thread;
      // A thread still loading its modules is let finish (startModuleThread); once running, it
      // hands its leases over.
      await Promise.race([loaded, ended]);
      if (running()) {
        worker.postMessage('stop');
        await Promise.race([stopped, ended]);
      }
      await worker.terminate();
    },
  };
}
