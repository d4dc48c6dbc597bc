// The connections of event streams, for shutdown. A stream that has ended still has its last
// bytes to write, and a client that stopped reading never takes them: its connection would hold
// the server's close open until the shutdown's grace period ran out, and the process would be
// killed with every other request in progress. Shutdown gives them a moment, then cuts them; the
// clients reconnect with their last id, to another process, and lose nothing.

import type { ServerResponse } from 'node:http';

/**
 * The responses of event streams not yet fully written. An entry leaves when its response closes
 * (written out, or its connection gone), so it holds no more than the open connections.
 */
export class StreamConnections {
  readonly #unfinished = new Set<ServerResponse>();

  /** Follows the response until it closes; absent for in-process requests. */
  track(response: ServerResponse | undefined): void {
    if (!response || response.closed) return;
    this.#unfinished.add(response);
    response.once('close', () => this.#unfinished.delete(response));
  }

  /** Destroys the connection of every stream whose response has not closed; returns how many. */
  destroyUnfinished(): number {
    const count = this.#unfinished.size;
    for (const response of this.#unfinished) response.destroy();
    this.#unfinished.clear();
    return count;
  }
}
