// `client.events.stream()`: GET /api/v1/events/stream as an async iterable of events that never
// loses one. It reads the Server-Sent Events with fetch streaming (no EventSource, so the API
// key stays a header and it runs wherever fetch streams: Node 20+, browsers), parses them with
// eventsource-parser, and reconnects with `Last-Event-ID` after a dropped connection, an
// `event: error` (SLOW_CONSUMER, a server failure) or a server that ended the stream (a
// restart), waiting the SDK's backoff between attempts.

import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errorForFailure, errorForResponse } from './errors.js';
import type { Event, EventStreamError } from './generated/models.js';
import type { operations } from '../../../spec/generated/openapi.js';
import { backoffMs, MAX_RETRY_AFTER_MS, retryAfterMs } from './retry.js';

/** The query of `events_stream`: the events list's search pairs and `fields`, `start_datetime`. */
export type EventStreamQuery = NonNullable<operations['events_stream']['parameters']['query']>;

export interface EventStreamOptions {
  /** Ends the iteration (quietly: the `for await` loop just finishes) and closes the connection. */
  signal?: AbortSignal | undefined;
  /**
   * Where to start: the `position` of an earlier stream (saved before your process stopped).
   * The stream continues right after that event, with nothing skipped or repeated.
   */
  lastEventId?: string | undefined;
  /**
   * Reconnections in a row that receive nothing before the stream gives up and throws
   * (default: never gives up). Refusals a retry cannot fix (401, 403, 410, 422) throw at once;
   * a 410 (GoneError) means retention removed events after `lastEventId`: start again with
   * `start_datetime`.
   */
  maxRetries?: number | undefined;
  /**
   * Milliseconds without a byte from the server (it sends a keep-alive every 15 s) after which
   * the connection is taken for dead and replaced (default 45,000).
   */
  idleTimeout?: number | undefined;
  /** Extra headers for this stream, over the client's. */
  headers?: Record<string, string> | undefined;
}

/** The events of a stream, in commit order; `position` is where to resume. */
export interface EventStream extends AsyncIterable<Event> {
  /**
   * The resume token of the last event the iteration handed out (or the `lastEventId` it
   * started from). Save it, and pass it as `lastEventId` to continue after a restart.
   */
  readonly position: string | undefined;
}

/** What the stream needs of its client. */
export interface EventStreamTransport {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
  initialDelayMs?: number;
  maxDelayMs?: number;
}

const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

function queryString(query: EventStreamQuery): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A message of the stream that ends the connection: the server's `event: error`. */
class StreamClosedByServer extends Error {
  constructor(readonly failure: EventStreamError) {
    super(failure.detail);
  }
}

export function openEventStream(
  transport: EventStreamTransport,
  query: EventStreamQuery,
  options: EventStreamOptions,
): EventStream {
  let position = options.lastEventId;
  const url = `${transport.baseUrl.replace(/\/$/, '')}/api/v1/events/stream${queryString(query)}`;
  const initialDelayMs = transport.initialDelayMs ?? 500;
  const maxDelayMs = transport.maxDelayMs ?? 8_000;
  const idleTimeoutMs = options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxRetries = options.maxRetries ?? Number.POSITIVE_INFINITY;
  const stop = options.signal ?? new AbortController().signal;

  async function* events(): AsyncGenerator<Event, void> {
    // Attempts since the last one that received an event; reset by each event.
    let failures = 0;
    let retryAfter: number | null = null;
    let problem: unknown;
    while (!stop.aborted) {
      if (failures > 0) {
        await sleep(retryAfter ?? backoffMs(failures - 1, initialDelayMs, maxDelayMs), stop);
        retryAfter = null;
        if (stop.aborted) return;
      }
      const connection = new AbortController();
      const abort = () => connection.abort(stop.reason);
      stop.addEventListener('abort', abort, { once: true });
      let idle: ReturnType<typeof setTimeout> | undefined;
      const touch = () => {
        clearTimeout(idle);
        idle = setTimeout(() => connection.abort(new Error('idle')), idleTimeoutMs);
      };
      try {
        const headers: Record<string, string> = {
          ...transport.headers,
          ...options.headers,
          Accept: 'text/event-stream',
        };
        if (position !== undefined) headers['Last-Event-ID'] = position;
        touch();
        let response: Response;
        try {
          response = await transport.fetch(url, { headers, signal: connection.signal });
        } catch (cause) {
          if (stop.aborted) return;
          failures += 1;
          if (failures > maxRetries) throw errorForFailure(cause, null);
          continue;
        }
        if (!response.ok) {
          const text = await response.text().catch(() => '');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // Not JSON (a proxy's page): the error keeps the text.
          }
          failures += 1;
          if (!RETRYABLE_STATUSES.has(response.status) || failures > maxRetries) {
            throw errorForResponse(response.status, body, response.headers);
          }
          const hinted = retryAfterMs(response.headers);
          retryAfter = hinted === null ? null : Math.min(hinted, MAX_RETRY_AFTER_MS);
          continue;
        }
        problem = undefined;
        const received: Array<{ id: string | undefined; event: Event }> = [];
        let closedBy: EventStreamError | undefined;
        const parser = createParser({
          onEvent(message: EventSourceMessage) {
            if (message.event === 'error') {
              closedBy = JSON.parse(message.data) as EventStreamError;
            } else if (message.event === 'event') {
              received.push({ id: message.id, event: JSON.parse(message.data) as Event });
            }
          },
        });
        const decoder = new TextDecoder();
        const reader = response.body!.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            touch();
            parser.feed(decoder.decode(value, { stream: true }));
            while (received.length > 0) {
              const next = received.shift()!;
              failures = 0;
              if (next.id !== undefined) position = next.id;
              yield next.event;
              if (stop.aborted) return;
            }
            if (closedBy) throw new StreamClosedByServer(closedBy);
          }
          // The server ended the stream (it is shutting down): reconnect.
        } catch (cause) {
          if (stop.aborted) return;
          // A dropped connection, a dead one (idle), or the server's `event: error`: resume.
          problem = cause;
        } finally {
          reader.releaseLock();
        }
        failures += 1;
        if (failures > maxRetries) {
          throw errorForFailure(problem ?? new Error('the server ended the stream'), null);
        }
      } finally {
        clearTimeout(idle);
        stop.removeEventListener('abort', abort);
        connection.abort();
      }
    }
  }

  let started = false;
  return {
    get position() {
      return position;
    },
    [Symbol.asyncIterator]() {
      if (started)
        throw new Error('An event stream can be iterated once; open another to read again.');
      started = true;
      return events();
    },
  };
}
