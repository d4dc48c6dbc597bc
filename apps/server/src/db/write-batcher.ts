// Group commit for small, frequent writes (routed sessions). Writes that arrive while the event
// loop is busy are committed together in one write transaction: on SQLite most of a small write's
// cost is the commit (every touched page goes to the WAL), so sixteen concurrent sessions cost
// little more than one. Each write still runs in its own savepoint, so one that fails (an unknown
// target) rolls back alone, and each caller gets its own result or error. Nobody is answered
// before the commit that holds their write.

import type { Db } from './client.js';

interface PendingWrite {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const queues = new WeakMap<Db, PendingWrite[]>();

function flush(db: Db, batch: PendingWrite[]): void {
  queues.delete(db);
  const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
  // better-sqlite3 runs a transaction function called inside another one as a savepoint.
  const runOne = db.sqlite.transaction((write: PendingWrite) => write.work());
  const runAll = db.sqlite.transaction(() => {
    for (const write of batch) {
      try {
        outcomes.push({ ok: true, value: runOne(write) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
  });
  try {
    runAll.immediate();
  } catch (error) {
    // The commit itself failed (a full disk, a lost lock): nothing of the batch was written.
    for (const write of batch) write.reject(error);
    return;
  }
  batch.forEach((write, index) => {
    const outcome = outcomes[index]!;
    if (outcome.ok) write.resolve(outcome.value);
    else write.reject(outcome.error);
  });
}

/**
 * Runs `work` (synchronous, using the same connection) in the next group commit and resolves
 * with its result once that commit is durable in the WAL.
 */
export function batchedWrite<T>(db: Db, work: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let queue = queues.get(db);
    if (!queue) {
      queue = [];
      queues.set(db, queue);
      const batch = queue;
      setImmediate(() => flush(db, batch));
    }
    queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
  });
}
