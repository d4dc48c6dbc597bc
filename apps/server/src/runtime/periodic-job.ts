// A background job a server runs at start-up and then at an interval (the sweeps of expired
// idempotency keys, planned experiment ends and events past retention), one run at a time.

import type { Logger } from 'pino';

/**
 * Runs `run` now and every `intervalMs`; a tick that finds the previous run still going skips.
 * A failed run is logged and the next tick tries again. The timer does not keep the process
 * alive. Returns a function that stops it.
 */
export function startPeriodicJob(
  logger: Logger,
  { name, intervalMs, run }: { name: string; intervalMs: number; run: () => Promise<void> },
): () => void {
  let running: Promise<void> | null = null;
  const tick = () => {
    running ??= run()
      .catch((error: unknown) => logger.warn({ err: error }, `${name} failed`))
      .finally(() => (running = null));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
