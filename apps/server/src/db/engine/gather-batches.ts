// Work gathered per turn of the event loop: the items submitted while the event loop is busy are
// handed to one run on its next turn, and each submitter still gets its own result or error: for
// work where one run does the work of many for little more than the cost of one.

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

export interface GatherOptions<I> {
  /**
   * Items of one lane are run one batch at a time: those submitted while the lane's batch is in
   * flight wait for it and go together in the next one, which starts after they were submitted.
   * Without lanes, every batch runs as soon as it is gathered, beside any still in flight.
   */
  laneOf?: (item: I) => string | number;
}

interface Lane<I, R> {
  waiting: Array<Pending<I, R>>;
  /** A batch will take what waits: gathering now, or (with lanes) one in flight. */
  busy: boolean;
}

/**
 * Gathers the items submitted for a database while the event loop is busy and hands them to `run`
 * together on its next turn, so `run` starts after every item of its batch was submitted. Each
 * submitter gets its own outcome; when `run` throws (a commit or a read failed), every submitter
 * gets that error.
 */
export function gatherBatches<D extends object, I, R>(
  run: (db: D, items: I[]) => Outcome<R>[] | Promise<Outcome<R>[]>,
  { laneOf }: GatherOptions<I> = {},
): (db: D, item: I) => Promise<R> {
  const lanesOfDatabase = new WeakMap<D, Map<string | number, Lane<I, R>>>();

  async function runBatch(db: D, batch: Array<Pending<I, R>>): Promise<void> {
    let outcomes: Outcome<R>[];
    try {
      outcomes = await run(
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

  /** Hands what waits in the lane `name` to a run on the event loop's next turn. */
  function schedule(db: D, lanes: Map<string | number, Lane<I, R>>, name: string | number) {
    const lane = lanes.get(name)!;
    lane.busy = true;
    setImmediate(() => {
      const batch = lane.waiting;
      lane.waiting = [];
      if (!laneOf) {
        // Without lanes the next item starts a batch of its own, beside this one.
        lanes.delete(name);
        void runBatch(db, batch);
        return;
      }
      void runBatch(db, batch).then(() => {
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
