// List reads served by a PostgreSQL streaming replica (DATABASE_READ_URL), each only when the
// replica has replayed everything the read must see. docs/architecture.md ("Past one PostgreSQL
// server: a streaming replica for list reads") has the rules; in short:
// - The replica's coverage is a moment on this process's monotonic clock: it has replayed every
//   commit the primary had made then. A probe (every PROBE_MS) notes the time, reads the primary's
//   WAL insert position, then the replica's replayed position; once the replica has replayed a
//   noted position, its coverage moves to that note's time.
// - A read that must see what was committed by a moment (a key's last write, the position a
//   stream replays to) goes to the replica only when its coverage reaches that moment; every read
//   goes to the primary once the coverage is more than the lag bound old. So a stalled or
//   unreachable replica costs nothing but its share of the reads, within the bound.

import type pg from 'pg';
import { postgresPool, splitPools, type PostgresDb, type SplitPools } from '../db/engine/client.js';

/** How often the replica's coverage is measured: the least a key waits after a write for it. */
const PROBE_MS = 100;
/** Noted positions the replica has not replayed yet, at most: a minute of probes. */
const MAX_PENDING = 600;
/** Keys whose last write the replica may not have yet, at most (see wrote). */
const MAX_KEYS_TRACKED = 10_000;

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
  #covered = Number.NEGATIVE_INFINITY;
  readonly #pending: Array<{ at: number; lsn: bigint }> = [];
  /** Per key id, when its last write ended; only those the replica may not have replayed. */
  readonly #lastWrites = new Map<string, number>();
  /** A floor for every key, raised when a tracked write had to be forgotten (MAX_KEYS_TRACKED). */
  #forgottenWrites = Number.NEGATIVE_INFINITY;
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
    await this.#probe();
    const tick = () => {
      this.#timer = setTimeout(() => {
        this.#probe()
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

  /** Where a list read of the key goes: it reads its own writes. */
  dbForKey(keyId: string): PostgresDb {
    return this.dbFor(Math.max(this.#lastWrites.get(keyId) ?? 0, this.#forgottenWrites));
  }

  /** Notes that a request of the key that may have written has ended (its commit is done). */
  wrote(keyId: string): void {
    this.#lastWrites.delete(keyId);
    if (this.#lastWrites.size >= MAX_KEYS_TRACKED) {
      // Forgotten, the oldest write still binds: every key waits for it, none reads past it.
      const [oldestKey, oldestAt] = this.#lastWrites.entries().next().value!;
      this.#lastWrites.delete(oldestKey);
      this.#forgottenWrites = Math.max(this.#forgottenWrites, oldestAt);
    }
    this.#lastWrites.set(keyId, performance.now());
  }

  async close(): Promise<void> {
    clearTimeout(this.#timer);
    await Promise.all([
      this.#replicaPools.end(),
      this.#primaryProbe.end(),
      this.#replicaProbe.end(),
    ]);
  }

  async #probe(): Promise<void> {
    // Noted before the primary is asked: every commit that had ended by then is at or below the
    // position it answers.
    const at = performance.now();
    const primary = await this.#primaryProbe.query<{ lsn: string }>(
      'SELECT pg_current_wal_insert_lsn()::text AS lsn',
    );
    this.#pending.push({ at, lsn: lsnValue(primary.rows[0]!.lsn) });
    if (this.#pending.length > MAX_PENDING) this.#pending.shift();
    const replica = await this.#replicaProbe.query<{ lsn: string | null }>(
      'SELECT pg_last_wal_replay_lsn()::text AS lsn',
    );
    const replayed = replica.rows[0]!.lsn;
    if (replayed === null) return;
    const through = lsnValue(replayed);
    while (this.#pending.length > 0 && this.#pending[0]!.lsn <= through) {
      this.#covered = this.#pending.shift()!.at;
    }
    for (const [keyId, at] of this.#lastWrites) {
      // In order of their writes: the first the replica may not have ends the sweep.
      if (at > this.#covered) break;
      this.#lastWrites.delete(keyId);
    }
  }
}
