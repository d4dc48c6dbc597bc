// A client of GET /api/v1/events/stream over real HTTP, as a customer's would read it: fetch
// streaming parsed by eventsource-parser. Every message is checked against the spec
// (contract.ts `validateStreamMessage`); an answer that is not a stream against the operation's
// declared answers.

import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Db } from '../../src/db/engine/client.js';
import { resumeTokensOf } from '../../src/runtime/resume-tokens.js';
import { specValidator } from './contract.js';

export interface StreamedEvent {
  /** The message's id: the resume token. */
  id: string;
  data: Record<string, unknown>;
}

export interface EventStreamReader {
  status: number;
  headers: Headers;
  /** The JSON body of an answer that is not a stream (an error). */
  body: unknown;
  /** Every event received so far, in order. */
  events: StreamedEvent[];
  /** Comments received (keep-alives). */
  comments: string[];
  /** The `event: error` message's data, once received. */
  error: { detail: string; code: string } | undefined;
  /** Why the connection broke, when it did not end cleanly and the client did not close it. */
  failure: unknown;
  /** Resolves when the server has ended the stream (or the client closed it). */
  ended: Promise<void>;
  /** Resolves once `count` events have arrived; rejects after `timeoutMs` or if it ends first. */
  waitFor(count: number, timeoutMs?: number): Promise<StreamedEvent[]>;
  /** Closes the connection from the client's side. */
  close(): void;
}

export interface OpenStreamOptions {
  key: string;
  /** Query string after `?`, as sent. */
  query?: string;
  lastEventId?: string;
  /** Read the body only when asked (a client that stops reading). */
  paused?: boolean;
}

export async function openEventStream(
  baseUrl: string,
  { key, query = '', lastEventId, paused = false }: OpenStreamOptions,
): Promise<EventStreamReader & { resume(): void }> {
  const url = `/api/v1/events/stream${query ? `?${query}` : ''}`;
  const abort = new AbortController();
  const headers: Record<string, string> = { 'Service-API-Key': key };
  if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
  const response = await fetch(`${baseUrl}${url}`, { headers, signal: abort.signal });
  const events: StreamedEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((waiter) => waiter());
  const reader: EventStreamReader & { resume(): void } = {
    status: response.status,
    headers: response.headers,
    body: undefined,
    events,
    comments,
    error: undefined,
    failure: undefined,
    ended: Promise.resolve(),
    close: () => abort.abort(),
    resume: () => undefined,
    waitFor(count, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        let finished = false;
        const check = () => {
          if (finished) return;
          if (events.length >= count) {
            finished = true;
            waiters.delete(check);
            clearTimeout(timer);
            resolve(events.slice(0, count));
          }
        };
        const timer = setTimeout(() => {
          finished = true;
          waiters.delete(check);
          reject(new Error(`${events.length} of ${count} events arrived in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        void reader.ended.then(() => {
          check();
          if (!finished) {
            finished = true;
            clearTimeout(timer);
            reject(
              new Error(
                `the stream ended after ${events.length} of ${count} events (${reader.error?.code ?? (reader.failure instanceof Error ? reader.failure.message : 'closed')})`,
              ),
            );
          }
        });
        check();
      });
    },
  };
  if (response.headers.get('content-type')?.startsWith('text/event-stream') !== true) {
    const text = await response.text();
    reader.body = text ? JSON.parse(text) : undefined;
    specValidator.validateResponse({
      method: 'GET',
      url,
      status: response.status,
      headers: response.headers,
      body: reader.body,
    });
    return reader;
  }
  specValidator.validateResponse({
    method: 'GET',
    url,
    status: response.status,
    headers: response.headers,
    body: undefined,
  });
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      const data: unknown = JSON.parse(message.data);
      const event = message.event ?? 'message';
      specValidator.validateStreamMessage({ url, event, data });
      if (reader.error) throw new Error('a message arrived after event: error');
      if (event === 'error') {
        reader.error = data as { detail: string; code: string };
      } else {
        events.push({ id: message.id!, data: data as Record<string, unknown> });
      }
      notify();
    },
    onComment(comment) {
      comments.push(comment);
    },
  });
  const decoder = new TextDecoder();
  let release: () => void = () => undefined;
  const gate = paused ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
  reader.resume = () => release();
  reader.ended = (async () => {
    await gate;
    try {
      for await (const chunk of response.body!) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      }
    } catch (error) {
      // The client closed it, or the connection was cut: either way the stream has ended.
      reader.failure = abort.signal.aborted ? undefined : error;
    } finally {
      notify();
    }
  })();
  return reader;
}

/**
 * The event ids that the resume tokens of an organization's streamed events name, read with the
 * database's token secret, for comparing what a stream sent with what the database holds.
 */
export async function eventIdsOf(
  db: Db,
  organizationId: number,
  events: readonly StreamedEvent[],
): Promise<number[]> {
  const tokens = resumeTokensOf(db);
  await tokens.ready();
  return events.map(({ id }) => {
    const eventId = tokens.position(organizationId, id);
    if (eventId === null)
      throw new Error(`"${id}" is not a token of organization ${organizationId}`);
    return eventId;
  });
}

/** The resume token the organization's stream sends for event `eventId`. */
export async function resumeTokenOf(
  db: Db,
  organizationId: number,
  eventId: number,
): Promise<string> {
  const tokens = resumeTokensOf(db);
  await tokens.ready();
  return tokens.make(organizationId, [eventId])[0]!;
}
