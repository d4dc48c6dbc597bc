// List reads served by a PostgreSQL streaming replica (DATABASE_READ_URL), each only when the
// replica has replayed everything the read must see. docs/architecture.md ("Past one PostgreSQL
// server: a streaming replica for list reads") has the rules; in short:
// - The replica's coverage is a moment on this process's monotonic clock: it has replayed every
//   commit the primary had made then, whichever process made it. A read of the primary's WAL
//   insert position notes when it began; once the replica has replayed that position, its
//   coverage moves to that moment.
// - A list read must see every commit that ended before it arrived, so it waits (FENCE_WAIT_MS at
//   most) for the coverage to pass its arrival; a stream's replay must see what its watcher read.
//   Otherwise, or once the coverage is more than the lag bound old, the primary serves the read.

import type pg from 'pg';
import { postgresPool, splitPools, type PostgresDb, type SplitPools } from '../db/engine/client.js';
import { FreshReads } from './fresh-reads.js';

/** How often the replica's coverage is measured between list reads (the lag metric, replays). */
const PROBE_MS = 100;
/**
 * How long a list read waits for the replica to replay what the primary had when the read
 * arrived. Under a steady stream of commits the replica has it at once or within a few looks for
 * nearly every read (docs/benchmarks.md, "Figures behind the code"); a read that waited this long
 * goes to the primary, so a replica that falls behind costs each read no more than this.
 */
const FENCE_WAIT_MS = 10;
/** The first pause between two looks at the replica's position while a read waits; it doubles. */
const FIRST_RECHECK_MS = 1;
/** Noted positions the replica has not replayed yet, at most: a minute of probes. */
const MAX_PENDING = 600;

export interface ReplicaOptions {
  /** How far behind the primary the replica may be and still serve a read, in milliseconds. */
  maxLagMs: number;
  /**
   * Connections this process may open to the replica, shared between list reads and the reads of
   * their versions as the primary's are (splitPoolSize), so a version never waits behind a list.
   */
  poolSize: number;
}

/** An LSN (`16/B374D848`) as a number that orders like it. */
function lsnValue(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** Reads a pool is running or holding in its line. */
function inProgress(pool: pg.Pool): number {
  return pool.totalCount - pool.idleCount + pool.waitingCount;
}

export class ReplicaReads {
  /**
   * The primary's handle with list reads, and the reads of their versions, on the replica;
   * everything else stays on the primary.
   */
  readonly view: PostgresDb;
  readonly maxLagMs: number;
  readonly #primary: PostgresDb;
  readonly #replicaPools: SplitPools;
  // Probes have connections of their own: behind a busy pool they would fall behind and send
  // every read to the primary exactly when the replica is most useful.
  readonly #primaryProbe: pg.Pool;
  readonly #replicaProbe: pg.Pool;
  /** The primary's WAL insert position, each read noted in #pending. */
  readonly #primaryPositions: FreshReads<bigint>;
  /** The replica's replayed position, each read moving #covered. */
  readonly #replayedPositions: FreshReads<bigint | null>;
  #covered = Number.NEGATIVE_INFINITY;
  readonly #pending: Array<{ at: number; lsn: bigint }> = [];
  #timer: NodeJS.Timeout | undefined;
  /**
   * Reads sent to the replica; to the primary because the replica was behind; to the primary
   * because it had fewer list reads in progress.
   */
  #served = { replica: 0, behind: 0, balanced: 0 };

  constructor(primary: PostgresDb, primaryUrl: string, readUrl: string, options: ReplicaOptions) {
    this.#primary = primary;
    this.maxLagMs = options.maxLagMs;
    this.#replicaPools = splitPools(readUrl, options.poolSize, 'agentline replica');
    this.#primaryProbe = postgresPool(primaryUrl, 1, 'agentline replica probe');
    this.#replicaProbe = postgresPool(readUrl, 1, 'agentline replica probe');
    this.#primaryPositions = new FreshReads(
      async () =>
        lsnValue(
          (
            await this.#primaryProbe.query<{ lsn: string }>(
              'SELECT pg_current_wal_insert_lsn()::text AS lsn',
            )
          ).rows[0]!.lsn,
        ),
      // Every commit that had ended when the read began is at or below the position it answers.
      ({ value, askedAt }) => {
        this.#pending.push({ at: askedAt, lsn: value });
        if (this.#pending.length > MAX_PENDING) this.#pending.shift();
      },
    );
    this.#replayedPositions = new FreshReads(
      async () => {
        const { lsn } = (
          await this.#replicaProbe.query<{ lsn: string | null }>(
            'SELECT pg_last_wal_replay_lsn()::text AS lsn',
          )
        ).rows[0]!;
        return lsn === null ? null : lsnValue(lsn);
      },
      ({ value }) => this.#replayed(value),
    );
    this.view = {
      ...primary,
      listPool: this.#replicaPools.listPool,
      readPool: this.#replicaPools.pool,
      close: async () => {},
    };
  }

  /**
   * Checks that the read URL is a hot standby of the primary (the same system identifier), then
   * measures its coverage every PROBE_MS. A failed probe changes nothing: the coverage ages, and
   * past the lag bound every read goes to the primary until a probe succeeds again.
   */
  async start(): Promise<void> {
    const identity =
      'SELECT system_identifier::text AS id, pg_is_in_recovery() AS standby FROM pg_control_system()';
    const [primary, replica] = await Promise.all([
      this.#primaryProbe.query<{ id: string; standby: boolean }>(identity),
      this.#replicaProbe.query<{ id: string; standby: boolean }>(identity),
    ]);
    if (!replica.rows[0]!.standby || replica.rows[0]!.id !== primary.rows[0]!.id) {
      throw new Error(
        'DATABASE_READ_URL is not a streaming replica of DATABASE_URL (it is not in recovery, or it was copied from another cluster); point it at a hot standby of the primary, or unset it',
      );
    }
    await this.#probe(performance.now());
    const tick = () => {
      this.#timer = setTimeout(() => {
        this.#probe(performance.now())
          .catch(() => {})
          .finally(tick);
      }, PROBE_MS);
      this.#timer.unref();
    };
    tick();
  }

  /** How far behind the replica is, in milliseconds (Infinity before its first measure). */
  get lagMs(): number {
    return performance.now() - this.#covered;
  }

  /**
   * Where a read that must see every commit made by `floor` (performance.now()) goes: the primary
   * if the replica may not have it; otherwise the side with fewer list reads in progress (the
   * replica on a tie), so the two servers' list throughputs add up instead of the replica taking
   * every list read while the primary's list connections stand idle.
   */
  dbFor(floor: number): PostgresDb {
    const needed = Math.max(floor, performance.now() - this.maxLagMs);
    if (this.#covered < needed) {
      this.#served.behind += 1;
      return this.#primary;
    }
    if (inProgress(this.#primary.listPool) < inProgress(this.view.listPool)) {
      this.#served.balanced += 1;
      return this.#primary;
    }
    this.#served.replica += 1;
    return this.view;
  }

  /** Reads sent to the replica so far, and to the primary (see #served). */
  get served(): Readonly<{ replica: number; behind: number; balanced: number }> {
    return this.#served;
  }

  /**
   * Where a list read arriving now goes: it sees every commit that ended before it arrived, in
   * any process (a key reads its own writes whichever process made them). It waits up to
   * FENCE_WAIT_MS for the replica to replay them, unless the replica is past the lag bound.
   */
  async dbForListRead(): Promise<PostgresDb> {
    const arrived = performance.now();
    if (this.lagMs <= this.maxLagMs) {
      const deadline = arrived + FENCE_WAIT_MS;
      await withinMs(this.#coverage(arrived, deadline), FENCE_WAIT_MS).catch(() => {});
    }
    return this.dbFor(arrived);
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    await Promise.all([
      this.#replicaPools.end(),
      this.#primaryProbe.end(),
      this.#replicaProbe.end(),
    ]);
  }

  /** Notes the primary's position as of `at`, then looks at what the replica has replayed. */
  async #probe(at: number): Promise<void> {
    await this.#primaryPositions.since(at);
    await this.#replayedPositions.since(performance.now());
  }

  /**
   * Resolves once the coverage has reached `at`, or at `deadline` (performance.now()) if not.
   * A query that hangs is bounded by the caller.
   */
  async #coverage(at: number, deadline: number): Promise<void> {
    await this.#probe(at);
    // Doubling: a replica that replays within a millisecond or two is looked at soon, a slower
    // one a few times at most, so a waiting read costs a handful of queries.
    for (let pause = FIRST_RECHECK_MS; this.#covered < at; pause *= 2) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      await this.#replayedPositions.since(performance.now());
    }
  }

  #replayed(through: bigint | null): void {
    if (through === null) return;
    while (this.#pending.length > 0 && this.#pending[0]!.lsn <= through) {
      this.#covered = this.#pending.shift()!.at;
    }
  }
}

/** `promise`, or a rejection once `ms` have passed (the promise itself runs on). */
function withinMs(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
