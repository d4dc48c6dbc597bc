// How a replay of the live events feed (event-feed.ts) is cut into batches: how many ids and
// bytes one batch covers at most, what it assumes of an event's size before it has read one, and
// how the process's replays take turns.

import pLimit from 'p-limit';

/**
 * Ids a replay statement covers at most: on SQLite it reads that range of the table, whatever
 * share of it matches, so a sparse organization or a narrow search does not hold the event loop
 * for one long statement; the replay goes on after other requests had their turn.
 */
export const REPLAY_SPAN = 20_000;
/**
 * Bytes of events a replay reads at once at most: what encoding and writing one batch costs the
 * event loop stays small beside another request's wait, however fast its client reads.
 */
export const REPLAY_BATCH_BYTES = 256 * 1024;
/** What a replay assumes of an event's size until it has read some. */
export const FIRST_EVENT_BYTES = 1024;
/**
 * Replay batches read, encoded and sent at once in the process, however many streams replay:
 * each replay waits for a turn per batch, in the order asked, so every one of them moves on. A
 * batch being read keeps a core busy (a SQLite reader thread, a PostgreSQL backend), then costs
 * the event loop a few milliseconds to encode. Unbounded, 100 replays opened at once kept every
 * core busy and /healthz beside them waited (docs/benchmarks.md, "Figures behind the code").
 * Two: one batch is read while the one before it is encoded, so a replay alone keeps its pace;
 * one turn made those 100 replays slower on PostgreSQL.
 */
export const REPLAY_BATCHES_AT_ONCE = 2;

/** Runs a replay's batch in its turn (REPLAY_BATCHES_AT_ONCE). */
export const replayTurn = pLimit(REPLAY_BATCHES_AT_ONCE);
