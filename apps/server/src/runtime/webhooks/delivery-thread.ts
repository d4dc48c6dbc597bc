// The webhook thread (delivery-thread-entry.ts): the dispatcher of a server process runs there,
// beside the API and not on its event loop, with a database connection of its own. Delivering
// thousands of messages a second (HTTP requests, signatures, the delivery log) then does not
// hold up the API's answers in the same process. runtime/start.ts starts it and stops it.

import type { Logger } from 'pino';
import type { Db } from '../../db/engine/client.js';
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
    const worker = startModuleThread('./delivery-thread-entry', import.meta.url, data);
    let running = false;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const stopped = new Promise<void>((resolve) =>
      worker.on('message', (message) => {
        if (message === 'running') running = true;
        if (message === 'stopped') resolve();
      }),
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
    return { worker, ended, stopped, running: () => running };
  }
  return {
    stop: async () => {
      stopping = true;
      const { worker, ended, stopped, running } = thread;
      // A thread still loading its modules has taken no lease yet: nothing to hand over, and
      // waiting for it to load would hold the process's exit up.
      if (running()) {
        worker.postMessage('stop');
        await Promise.race([stopped, ended]);
      }
      await worker.terminate();
    },
  };
}
