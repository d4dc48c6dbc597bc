// Requests a client pipelines on a keep-alive connection, run no faster than it reads the answers:
// a connection's requests reach the app only while it has fewer than ANSWERS_PER_CONNECTION
// answers in the process (docs/architecture.md, "Pipelined requests").

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The bound: answers of one connection in the process at once, each counted from the moment its
 * request reaches the app until its last byte is handed to the kernel (the response's 'finish'):
 * being made, written behind an earlier answer, or waiting in the socket's buffer for a client
 * that does not read. Requests parsed beyond it wait unrun; the connection is not read meanwhile,
 * so they are at most what one read of the socket brought (64 KiB of requests).
 *
 * Why 1: a connection's answers leave one at a time, in order, so a second answer made meanwhile
 * would only wait in memory, and an answer may be a page of 1,000 events (about 330 KB). A client
 * that pipelines loses only the overlap of making its next answer while the last one is sent,
 * which is how nginx and Go's net/http serve pipelined requests (one after another); one that
 * sends its next request once it has read an answer waits at most until the server sees the last
 * write of that answer done. Clients wanting answers at once open several connections, within
 * their key's share (admission.ts).
 */
export const ANSWERS_PER_CONNECTION = 1;

export type RequestHandler = (incoming: IncomingMessage, outgoing: ServerResponse) => void;

interface WaitingRequest {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  handle: RequestHandler;
}

/** What Node's HTTP server keeps on a connection's socket, as this module reads and sets it. */
interface HttpServerSocket extends Socket {
  /** While true, Node's HTTP server reads nothing of the socket (its own backpressure). */
  _paused: boolean;
  /** The connection's HTTP parser, which Node pauses along with the socket; null once freed. */
  parser?: { resume(): void } | null;
}

/** One connection's answers in the process, and the requests waiting for their turn. */
class Connection {
  private answering = 0;
  private readonly waiting: WaitingRequest[] = [];
  /** Node's own `_paused`, once the socket's flag also reads the requests waiting here. */
  private nodePaused: boolean | undefined;

  constructor(private readonly socket: HttpServerSocket) {}

  get holding(): boolean {
    return this.waiting.length > 0;
  }

  admit(request: WaitingRequest): void {
    if (this.answering < ANSWERS_PER_CONNECTION && !this.holding) {
      this.start(request);
      return;
    }
    this.waiting.push(request);
    if (this.waiting.length === 1) this.stopReading();
  }

  private start({ incoming, outgoing, handle }: WaitingRequest): void {
    this.answering += 1;
    outgoing.on('finish', this.answered);
    handle(incoming, outgoing);
  }

  private readonly answered = (): void => {
    this.answering -= 1;
    if (!this.holding) return;
    // Closing (an answer said `Connection: close`): none of the waiting requests is answered.
    if (this.socket.destroyed || this.socket.writableEnded) {
      this.waiting.length = 0;
      return;
    }
    while (this.answering < ANSWERS_PER_CONNECTION && this.holding) {
      this.start(this.waiting.shift()!);
    }
    if (!this.holding && !this.nodePaused) {
      // As Node resumes a connection it paused: the parser first, which it paused along with it.
      this.socket.parser?.resume();
      this.socket.resume();
    }
  };

  private stopReading(): void {
    const { socket } = this;
    if (this.nodePaused === undefined) {
      // Node resumes a connection when it sees fit (after each request it parses, when a body is
      // read, when its own waiting answers drain) unless `_paused` is set, and clears the flag
      // once its own answers drain. Read as set while requests wait here, it keeps every one of
      // Node's checks from reading more; what Node sets is kept apart and honoured.
      this.nodePaused = socket._paused;
      Object.defineProperty(socket, '_paused', {
        configurable: true,
        get: () => this.nodePaused === true || this.holding,
        set: (paused: boolean) => {
          this.nodePaused = paused;
        },
      });
      socket.once('close', () => {
        this.waiting.length = 0;
      });
    }
    // Node's server stops reading on the socket's 'pause' event, which a stream that reads as
    // paused already does not emit again, even while its reads go on (a resume Node scheduled
    // before can have restarted them): made to flow first, it emits it.
    socket.resume();
    socket.pause();
  }
}

/** The front door's turns: every request of a connection goes through `admit`. */
export class PipelinedRequests {
  private readonly connections = new WeakMap<Socket, Connection>();

  /** Runs `handle` for the request now, or once its connection's earlier answers have left. */
  admit(incoming: IncomingMessage, outgoing: ServerResponse, handle: RequestHandler): void {
    const socket = incoming.socket as HttpServerSocket;
    let connection = this.connections.get(socket);
    if (!connection) {
      connection = new Connection(socket);
      this.connections.set(socket, connection);
    }
    connection.admit({ incoming, outgoing, handle });
  }

  /** Whether requests of the connection wait for its client to read, so that it is not read. */
  isHolding(socket: Socket): boolean {
    return this.connections.get(socket)?.holding ?? false;
  }
}
