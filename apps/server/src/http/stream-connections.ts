// The connection of an event stream that has ended. The stream ended (its client read too slowly,
// its key was revoked, the server is shutting down) with its last bytes still to write, and a
// client that stopped reading never takes them: its connection would go on holding what was
// queued for it, with nothing left to count it against the key's streams, and on shutdown would
// hold the server's close open until the grace period ran out. It gets a moment to finish, then
// it is cut; the client reconnects with its last id and loses nothing.

import type { ServerResponse } from 'node:http';

/** How long an ended stream has to write its last bytes: a client that reads takes them at once. */
export const STREAM_FINISH_MS = 1_000;

/**
 * Cuts `response`'s connection unless its last bytes have gone to the client within `ms`.
 * `response` is absent for in-process requests, which hold no connection.
 */
export function cutUnlessFinished(
  response: ServerResponse | undefined,
  ms: number = STREAM_FINISH_MS,
): void {
  if (!response || response.writableFinished) return;
  const cut = setTimeout(() => {
    // Finished means written out: the connection may be serving the client's next request.
    if (!response.writableFinished) response.destroy();
  }, ms);
  cut.unref();
  response.once('close', () => clearTimeout(cut));
}
