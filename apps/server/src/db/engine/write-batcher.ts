// Group commit for small, frequent writes (routed sessions). Writes that arrive while the event
// loop is busy are committed together, and each caller still gets its own result or error;
// nobody is answered before the commit that holds their write.
//
// On SQLite most of a small write's cost is the commit (every touched page goes to the WAL), so
// sixteen concurrent sessions cost little more than one: batchedWrite runs each write in its own
// savepoint of one write transaction, so one that fails (an unknown target) rolls back alone.
// PostgreSQL's session routing gathers its writes the same way (gatherWrites), one batch in flight
// per organization, and commits each batch with set-based statements of its own
// (repositories/sessions.ts).

import type { SqliteDb } from './client.js';

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export interface GatherOptions<I> {
  /**
   * Items of one lane (an organization's sessions) are committed one batch at a time: those
   * submitted while the lane's batch is in flight wait for it and go together in the next one.
   * For writes the database would make wait for each other anyway (PostgreSQL's routing takes the
   * organization's write turn): each waiting on its own transaction would hold a connection and
   * a turn's worth of work per item, where one batch does the work of all of them in one turn.
   * Without lanes, every batch is committed as soon as it is gathered.
   */
  laneOf?: (item: I) => string | number;
}

interface Lane<I, R> {
  waiting: Array<Pending<I, R>>;
  /** A batch will take what waits: gathering now, or (with lanes) one in flight. */
  busy: boolean;
}

/**
 * Gathers the items submitted for a database while the event loop is busy and hands them to
 * `commit` together on its next turn. Each submitter gets its own outcome; when `commit` throws
 * (the commit itself failed), every submitter gets that error.
 */
export function gatherWrites<D extends object, I, R>(
  commit: (db: D, items: I[]) => Outcome<R>[] | Promise<Outcome<R>[]>,
  { laneOf }: GatherOptions<I> = {},
): (db: D, item: I) => Promise<R> {
  const lanesOfDatabase = new WeakMap<D, Map<string | number, Lane<I, R>>>();

  async function commitBatch(db: D, batch: Array<Pending<I, R>>): Promise<void> {
    let outcomes: Outcome<R>[];
    try {
      outcomes = await commit(
        db,
        batch.map((pending) => pending.item),
      );
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }

  /** Hands what waits in the lane `name` to a commit on the event loop's next turn. */
  function schedule(db: D, lanes: Map<string | number, Lane<I, R>>, name: string | number) {
    const lane = lanes.get(name)!;
    lane.busy = true;
    setImmediate(() => {
      const batch = lane.waiting;
      lane.waiting = [];
      if (!laneOf) {
        // Without lanes the next item starts a batch of its own, beside this one.
        lanes.delete(name);
        void commitBatch(db, batch);
        return;
      }
      void commitBatch(db, batch).then(() => {
        if (lane.waiting.length > 0) schedule(db, lanes, name);
        else lanes.delete(name);
      });
    });
  }

  return (db, item) =>
    new Promise<R>((resolve, reject) => {
      let lanes = lanesOfDatabase.get(db);
      if (!lanes) {
        lanes = new Map();
        lanesOfDatabase.set(db, lanes);
      }
      const name = laneOf ? laneOf(item) : '';
      let lane = lanes.get(name);
      if (!lane) {
        lane = { waiting: [], busy: false };
        lanes.set(name, lane);
      }
      lane.waiting.push({ item, resolve, reject });
      if (!lane.busy) schedule(db, lanes, name);
    });
}

const commitOnSqlite = gatherWrites((db: SqliteDb, works: Array<() => unknown>) => {
  const outcomes: Outcome<unknown>[] = [];
  // better-sqlite3 runs a transaction function called inside another one as a savepoint.
  const runOne = db.sqlite.transaction((work: () => unknown) => work());
  const runAll = db.sqlite.transaction(() => {
    for (const work of works) {
      try {
        outcomes.push({ ok: true, value: runOne(work) });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
  });
  // If the commit itself fails (a full disk, a lost lock), nothing of the batch was written.
  runAll.immediate();
  return outcomes;
});

/**
 * Runs `work` (synchronous, using the same connection) in the next group commit and resolves
 * with its result once that commit is durable in the WAL.
 */
export function batchedWrite<T>(db: SqliteDb, work: () => T): Promise<T> {
  return commitOnSqlite(db, work) as Promise<T>;
}
