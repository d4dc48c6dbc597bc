// How a replay of the live events feed (event-feed.ts) is cut into batches: how many ids and
// bytes one batch covers at most, and what it assumes of an event's size before it has read one.

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
