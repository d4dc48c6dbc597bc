// The connection of an event stream that has ended. The stream ended (its client read too slowly,
// its key was revoked, the server is shutting down) with its last bytes still to write, and a
// client that stopped reading never takes them: its connection would go on holding what was
// queued for it, and on shutdown would hold the server's close open until the grace period ran
// out. A client that takes no byte for a while is cut; it reconnects with its last id and loses
// nothing. A slow client that still reads keeps its connection until it has read the end.

import type { ServerResponse } from 'node:http';

/**
 * How long an ended stream's client may take no byte before its connection is cut: longer than a
 * reading client's pauses (a collection, a busy event loop, a congested link).
 */
export const ENDED_STREAM_IDLE_MS = 10_000;

/** The same while the server shuts down, which waits for every connection to close. */
export const ENDED_STREAM_IDLE_MS_ON_SHUTDOWN = 1_000;

/**
 * Cuts `response`'s connection once its client has taken no byte for `idleMs`, unless its last
 * bytes have gone out by then. `response` is absent for in-process requests, which hold no
 * connection.
 */
export function cutWhenIdle(response: ServerResponse | undefined, idleMs: number): void {
  if (!response || response.writableFinished) return;
  const cut = setTimeout(() => {
    // Finished means written out: the connection may be serving the client's next request.
    if (!response.writableFinished) response.destroy();
  }, idleMs);
  cut.unref();
  // Node says 'drain' when the client has taken what waited: it is reading.
  const reading = () => cut.refresh();
  response.on('drain', reading);
  response.once('close', () => {
    clearTimeout(cut);
    response.off('drain', reading);
  });
}
