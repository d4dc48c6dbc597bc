// The HTTP server around the app: Node's http.Server with @hono/node-server's request listener,
// plus what neither does the way a JSON API needs it, once for every route: the contract's JSON
// for the answers the server gives on its own, lingering close, and pipelined requests one
// answer at a time (docs/architecture.md, "The front door").

import {
  createServer,
  STATUS_CODES,
  type ServerResponse,
  type IncomingMessage,
  type Server,
  type ServerOptions,
} from 'node:http';
import type { Socket } from 'node:net';
import { getRequestListener, RequestError, type HttpBindings } from '@hono/node-server';
import type { Logger } from 'pino';
import type { ErrorCode } from './errors.js';
import { PipelinedRequests } from './pipelined-requests.js';
import { requestIdOf, SECURITY_HEADERS } from './request-context.js';

/** How long a request answered before its body ended may go on sending it. */
export const LINGER_MS = 10_000;

export interface FrontDoorOptions {
  fetch: Parameters<typeof getRequestListener>[0];
  logger: Logger;
  /** The largest accepted body: also what a refused request may still send after its answer. */
  bodyLimitBytes: number;
  /** The host of request URLs when an HTTP/1.0 request names none. */
  hostname?: string;
  serverOptions?: ServerOptions;
  lingerMs?: number;
}

interface Refusal {
  status: number;
  code: ErrorCode;
  detail: string;
}

function errorAnswer(
  refusal: Refusal,
  requestId: string,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({
    detail: refusal.detail,
    code: refusal.code,
    request_id: requestId,
  });
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': requestId,
      ...Object.fromEntries(SECURITY_HEADERS),
    },
  };
}

function headerOf(incoming: IncomingMessage | undefined, name: string): string | undefined {
  const value = incoming?.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const BAD_HTTP_HINT =
  'check the request line and the header syntax (an HTTP client library gets these right).';

/** What to answer a `clientError`; null for a failed socket, which nobody is left to read. */
function clientErrorRefusal(error: NodeJS.ErrnoException & { reason?: unknown }): Refusal | null {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: 'BAD_REQUEST',
        detail: 'The request headers are larger than 16 KiB; send fewer or shorter headers.',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        code: 'PAYLOAD_TOO_LARGE',
        detail:
          'The chunk extensions of the request body are too large; send the body without them.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'REQUEST_TIMEOUT',
        detail:
          'The request did not arrive in time (its headers within 10 s, all of it within 30 s); send it again without pausing.',
      };
  }
  if (!error.code?.startsWith('HPE_')) return null;
  // llhttp's reasons are fixed phrases ("Invalid header value char"), never the client's bytes.
  const reason =
    typeof error.reason === 'string' && /^[\w ,.'()-]{1,80}$/.test(error.reason)
      ? ` (${error.reason})`
      : '';
  return {
    status: 400,
    code: 'BAD_REQUEST',
    detail: `The request is not valid HTTP/1.1${reason}; ${BAD_HTTP_HINT}`,
  };
}

/** What to answer a request @hono/node-server could not turn into a Web Request. */
function requestErrorRefusal(error: RequestError): Refusal {
  return {
    status: 400,
    code: 'BAD_REQUEST',
    detail: /host/i.test(error.message)
      ? 'The Host header is not a host name or address with an optional port; send the name or address of this server.'
      : 'The request target is not a valid URL path (for example, it holds a backslash); send a path such as /api/v1/events/.',
  };
}

/**
 * An answer written before its request's body has all arrived says `Connection: close`: the
 * connection closes once the rest of the body is drained or cut (lingerAfterAnswer), so the client
 * must not send another request on it (one sent while the body is being cut would be lost). Called
 * just before the answer's head is written. (Not a ServerResponse subclass overriding writeHead:
 * with any subclass, even an empty one, every request costs more CPU time; docs/benchmarks.md.)
 */
function closeAfterAnswerIfBodyUnread(incoming: IncomingMessage, outgoing: ServerResponse): void {
  if (!incoming.complete) outgoing.shouldKeepAlive = false;
}

/**
 * The Node server that serves `fetch` (the app) and refuses, in the contract's words, what never
 * reaches the app. Listen on it as on any http.Server.
 */
export function createFrontDoor({
  fetch,
  logger,
  bodyLimitBytes,
  hostname,
  serverOptions = {},
  lingerMs = LINGER_MS,
}: FrontDoorOptions): Server {
  /** Sockets whose request was answered and whose body is being drained. */
  const lingering = new WeakSet<Socket>();
  /** Sockets answered here because Node could not parse what they sent. */
  const refused = new WeakSet<Socket>();

  const log = (requestId: string, status: number, reason: string, method?: string) =>
    logger.info(
      { request_id: requestId, method, status, reason },
      'request refused before the app',
    );

  /** Reads and drops what a socket still sends, up to the body limit and for lingerMs at most. */
  const drain = (source: IncomingMessage | Socket, socket: Socket, onDone: () => void) => {
    let drained = 0;
    const stop = () => {
      clearTimeout(timer);
      source.off('data', onData);
      source.off('end', stop);
      socket.off('close', stop);
      onDone();
    };
    const cut = () => {
      stop();
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > bodyLimitBytes) cut();
    };
    const timer = setTimeout(cut, lingerMs);
    timer.unref();
    source.on('data', onData);
    source.once('end', stop);
    socket.once('close', stop);
    source.resume();
  };

  /**
   * Once the answer is complete (`prefinish`, before Node's own `finish` handler would discard
   * the rest of the body uncounted and without end): the rest of an unread body is drained, then
   * the connection closes (closeAfterAnswerIfBodyUnread said so), with nothing left unread, so
   * without a reset.
   */
  const lingerAfterAnswer = (incoming: IncomingMessage) => {
    const { socket } = incoming;
    if (incoming.complete || socket.destroyed) return;
    lingering.add(socket);
    // Node closes the socket after an answer that says `Connection: close`, and @hono/node-server
    // 500 ms after the answer (its own drain), both with destroySoon: deferred until the body is
    // drained or cut.
    let closeWhenDrained = false;
    socket.destroySoon = () => {
      closeWhenDrained = true;
    };
    drain(incoming, socket, () => {
      lingering.delete(socket);
      delete (socket as Partial<Socket>).destroySoon;
      if (closeWhenDrained && !socket.destroyed) socket.destroySoon();
    });
  };

  /** Answers on the socket itself (nothing of the request could be parsed), then closes. */
  const refuseOnSocket = (socket: Socket, refusal: Refusal, requestId: string) => {
    const { body, headers } = errorAnswer(refusal, requestId);
    const head = [
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      `Date: ${new Date().toUTCString()}`,
      'Connection: close',
    ].join('\r\n');
    socket.end(`${head}\r\n\r\n${body}`);
  };

  const refuseRequest = (
    incoming: IncomingMessage,
    outgoing: ServerResponse,
    refusal: Refusal,
    reason: string,
  ) => {
    const requestId = requestIdOf(headerOf(incoming, 'x-request-id'));
    const { body, headers } = errorAnswer(refusal, requestId);
    log(requestId, refusal.status, reason, incoming.method);
    closeAfterAnswerIfBodyUnread(incoming, outgoing);
    outgoing.writeHead(refusal.status, headers);
    outgoing.end(body);
  };

  // The request the adapter is building right now: its errorHandler runs before the listener's
  // first await when the request cannot be built, so the handler can echo its X-Request-Id.
  let building: { incoming: IncomingMessage; outgoing: ServerResponse } | undefined;
  /** The app's answer, which the adapter writes as soon as it has it. */
  const answer: typeof fetch = async (request, env) => {
    const response = await fetch(request, env);
    const { incoming, outgoing } = env as HttpBindings;
    closeAfterAnswerIfBodyUnread(incoming, outgoing);
    return response;
  };
  const listener = getRequestListener(answer, {
    hostname,
    errorHandler: (error) => {
      const incoming = building?.incoming;
      if (building) closeAfterAnswerIfBodyUnread(building.incoming, building.outgoing);
      const requestId = requestIdOf(headerOf(incoming, 'x-request-id'));
      let refusal: Refusal;
      if (error instanceof RequestError) {
        refusal = requestErrorRefusal(error);
        log(requestId, refusal.status, error.message, incoming?.method);
      } else {
        // The app answers its own errors (onError): this is a fault of the adapter or of Node.
        refusal = {
          status: 500,
          code: 'INTERNAL',
          detail: 'Something went wrong on our side. Quote the request id when you report it.',
        };
        logger.error({ err: error, request_id: requestId }, 'unhandled error outside the app');
      }
      const { body, headers } = errorAnswer(refusal, requestId);
      return new Response(body, { status: refusal.status, headers });
    },
  });

  const handleRequest = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    outgoing.once('prefinish', () => lingerAfterAnswer(incoming));
    if (incoming.httpVersion === '1.1' && incoming.headers.host === undefined) {
      refuseRequest(
        incoming,
        outgoing,
        {
          status: 400,
          code: 'BAD_REQUEST',
          detail:
            'An HTTP/1.1 request needs a Host header; send the name or address of this server.',
        },
        'Missing host header',
      );
      return;
    }
    building = { incoming, outgoing };
    const answered = listener(incoming, outgoing);
    building = undefined;
    answered.catch((error: unknown) =>
      logger.error({ err: error }, 'unhandled error outside the app'),
    );
  };
  const refuseExpectation = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    outgoing.once('prefinish', () => lingerAfterAnswer(incoming));
    refuseRequest(
      incoming,
      outgoing,
      {
        status: 417,
        code: 'BAD_REQUEST',
        detail:
          'The only Expect this server supports is 100-continue; send the request without it.',
      },
      'Unsupported Expect',
    );
  };

  const pipelined = new PipelinedRequests();
  const server = createServer(
    // Checked in handleRequest, so that the answer is JSON like every other.
    { ...serverOptions, requireHostHeader: false },
    (incoming, outgoing) => pipelined.admit(incoming, outgoing, handleRequest),
  );
  server.on('checkExpectation', (incoming: IncomingMessage, outgoing: ServerResponse) =>
    pipelined.admit(incoming, outgoing, refuseExpectation),
  );

  server.on('connect', (incoming: IncomingMessage, socket: Socket) => {
    socket.on('error', () => socket.destroy());
    const requestId = requestIdOf(headerOf(incoming, 'x-request-id'));
    log(requestId, 400, 'CONNECT', 'CONNECT');
    refuseOnSocket(
      socket,
      {
        status: 400,
        code: 'BAD_REQUEST',
        detail: 'CONNECT is not supported: this is an API server, not a proxy.',
      },
      requestId,
    );
    drain(socket, socket, () => {});
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Node keeps feeding what else arrives to the failed parser, which fails again: answered once.
    if (refused.has(socket)) return;
    // A request still arriving when its connection stopped being read (its client had not read
    // the answers before it) times out for the server's pause, not the client's: Node times each
    // request once, so it goes on untimed, as the connection of a client that does not read does.
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && pipelined.isHolding(socket)) return;
    const refusal = clientErrorRefusal(error);
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    // A failed socket, a request answered already (now lingering), or an answer half written:
    // nothing can be added to what the client reads.
    if (!refusal || !socket.writable || lingering.has(socket) || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    refused.add(socket);
    const requestId = requestIdOf(undefined);
    log(requestId, refusal.status, error.code ?? 'clientError');
    refuseOnSocket(socket, refusal, requestId);
    // An earlier request's answer is still being made (the request timed out while its handler
    // ran): that answer ends here, as Node's own 408 would end it.
    if (inFlight) socket.destroy();
    else drain(socket, socket, () => {});
  });

  return server;
}
