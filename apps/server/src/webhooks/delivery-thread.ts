// The webhook thread (delivery-thread-entry.ts): the dispatcher of a server process runs there,
// beside the API and not on its event loop, with a database connection of its own. Delivering
// thousands of messages a second (HTTP requests, signatures, the delivery log) then does not
// hold up the API's answers in the same process. main.ts starts it and stops it on SIGTERM.

import type { Logger } from 'pino';
import type { Db } from '../db/engine/client.js';
import { startModuleThread } from '../serving/module-thread.js';
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

/** An unexpected end of the thread is followed by a new one after this long. */
const RESTART_AFTER_MS = 1000;

/**
 * Starts delivering webhooks for this process: in a thread, or on this event loop for a
 * `:memory:` SQLite database (it exists in `db`'s connection only, nothing another could open).
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
  let thread = start();
  function start() {
    const started = startModuleThread('./delivery-thread-entry', import.meta.url, data);
    started.on('error', (error) => logger.error({ err: error }, 'the webhook thread failed'));
    started.once('exit', () => {
      if (stopping) return;
      // Its leases lapse and another process may take its endpoints over meanwhile.
      logger.warn('the webhook thread ended; starting another');
      setTimeout(() => {
        if (!stopping) thread = start();
      }, RESTART_AFTER_MS).unref();
    });
    return started;
  }
  return {
    stop: async () => {
      stopping = true;
      const ended = new Promise<void>((resolve) => {
        thread.once('message', () => resolve());
        thread.once('exit', () => resolve());
      });
      thread.postMessage('stop');
      await ended;
      await thread.terminate();
    },
  };
}
