// client.events.stream against an injected fetch: the query it sends, the events it yields, and
// how it resumes after the server's `event: error`.

import { describe, expect, it } from 'vitest';
import { UnprocessableEntityError, createClient, type Event } from '../src/index.js';

function sse(text: string): Response {
  return new Response(text, { headers: { 'Content-Type': 'text/event-stream' } });
}

const message = (id: number, type: string) =>
  `id: ${id}\nevent: event\ndata: ${JSON.stringify({ timestamp: '2026-01-01T00:00:00.000Z', type })}\n\n`;

describe('client.events.stream', () => {
  it('sends the query, yields events and resumes after SLOW_CONSUMER with Last-Event-ID', async () => {
    const calls: Array<{ url: URL; lastEventId: string | null }> = [];
    const answers = [
      () =>
        sse(
          `: keep-alive\n\n${message(7, 'a')}${message(9, 'b')}event: error\ndata: ${JSON.stringify({ detail: 'too slow', code: 'SLOW_CONSUMER' })}\n\n`,
        ),
      () => sse(message(12, 'c')),
    ];
    const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      calls.push({ url: new URL(request.url), lastEventId: request.headers.get('last-event-id') });
      return Promise.resolve(answers[calls.length - 1]!());
    };
    const client = createClient({ apiKey: 'k', baseUrl: 'http://api.test', fetch });
    const stop = new AbortController();
    const stream = client.events.stream(
      { search_fields: ['type', 'source'], search_field_values: ['x', 'y'], fields: ['type'] },
      { signal: stop.signal },
    );
    const seen: Event[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (seen.length === 3) stop.abort();
    }
    expect(seen.map((event) => event.type)).toEqual(['a', 'b', 'c']);
    expect(stream.position).toBe('12');
    expect(calls[0]!.url.pathname).toBe('/api/v1/events/stream');
    expect(calls[0]!.url.searchParams.getAll('search_fields')).toEqual(['type', 'source']);
    expect(calls[0]!.url.searchParams.getAll('fields')).toEqual(['type']);
    expect(calls.map((call) => call.lastEventId)).toEqual([null, '9']);
  });

  it("calls fetch as a browser's fetch must be called: not as a method of another object", async () => {
    // A browser's fetch throws "Illegal invocation" when `this` is anything but the window.
    function browserFetch(this: unknown, _input: RequestInfo | URL, _init?: RequestInit) {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
      return Promise.resolve(sse(message(3, 'shown')));
    }
    const client = createClient({ apiKey: 'k', baseUrl: 'http://api.test', fetch: browserFetch });
    const stop = new AbortController();
    for await (const event of client.events.stream({}, { signal: stop.signal, maxRetries: 0 })) {
      expect(event.type).toBe('shown');
      stop.abort();
    }
    expect(stop.signal.aborted).toBe(true);
  });

  it('throws a refusal a retry cannot fix', async () => {
    const fetch = () =>
      Promise.resolve(
        new Response(JSON.stringify({ detail: [{ loc: ['query'], msg: 'bad', type: 'x' }] }), {
          status: 422,
          headers: { 'Content-Type': 'application/json' },
        }),
      );
    const client = createClient({ apiKey: 'k', baseUrl: 'http://api.test', fetch });
    const iterate = async () => {
      for await (const event of client.events.stream()) void event;
    };
    await expect(iterate()).rejects.toBeInstanceOf(UnprocessableEntityError);
  });
});
