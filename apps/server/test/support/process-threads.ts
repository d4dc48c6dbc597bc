// The test process's threads, counted by Linux, for tests that a thread is started or ended.

import { readdirSync } from 'node:fs';
import { expect } from 'vitest';

/** How many threads this process has now. */
export const processThreads = () => readdirSync('/proc/self/task').length;

/**
 * Waits until the process is back to `count` threads. A worker's `exit` comes once its thread
 * is joined, but the kernel may list the joined thread for a moment longer on a busy machine;
 * a thread that never ends still fails this.
 */
export async function expectThreadsBackTo(count: number): Promise<void> {
  await expect.poll(processThreads, { interval: 5, timeout: 5_000 }).toBe(count);
}
