// Open-loop load: work that arrives on a schedule of its own, whatever the server's answers do, as
// a day's customers arrive. A closed loop (autocannon, a worker that sends its next request when
// the last is answered) slows down with the server and so hides how long a busy server keeps
// people waiting; here a late answer leaves the next arrivals on time, and each latency counts
// from the moment its work was due, not from when the client got round to sending it.

/** Gaps of a Poisson process: independent arrivals at `perSecond` on average. */
export function poissonGapsMs(perSecond: number): () => number {
  return () => (-Math.log(1 - Math.random()) * 1000) / perSecond;
}

interface OpenLoopCount {
  /** Arrivals whose work was started. */
  started: number;
  /** Arrivals dropped because `maxInFlight` of them were still in progress. */
  dropped: number;
}

/**
 * Starts `work(dueAt)` at each arrival of the schedule (the first after `firstGapMs`, then `gapMs()`
 * apart; `dueAt` on the performance.now() clock) until `untilMs`, with at most `maxInFlight` in
 * progress: an arrival beyond them is dropped and counted, as a client with a bounded pool
 * would. Arrivals that fell due while the event loop was busy start at once, late. Resolves once
 * the last work started has ended.
 */
export async function openLoop(options: {
  untilMs: number;
  firstGapMs: number;
  gapMs: () => number;
  maxInFlight: number;
  work: (dueAt: number) => Promise<unknown>;
}): Promise<OpenLoopCount> {
  const count: OpenLoopCount = { started: 0, dropped: 0 };
  const inFlight = new Set<Promise<unknown>>();
  let dueAt = performance.now() + options.firstGapMs;
  while (dueAt < options.untilMs) {
    const wait = dueAt - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (inFlight.size >= options.maxInFlight) {
      count.dropped += 1;
    } else {
      count.started += 1;
      const running: Promise<unknown> = options.work(dueAt).finally(() => inFlight.delete(running));
      inFlight.add(running);
    }
    dueAt += options.gapMs();
  }
  await Promise.all(inFlight);
  return count;
}
