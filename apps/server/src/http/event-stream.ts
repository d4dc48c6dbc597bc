// The events stream's HTTP side (GET /api/v1/events/stream): Server-Sent Events over the
// process's one event feed (runtime/event-feed.ts), a bounded buffer per stream, the
// keep-alive comment, and the per-key count of open streams. The wire format is the spec's.

import type { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { EventsRemovedError, InputRuleError } from '../domain/errors.js';
import type { Db } from '../db/engine/client.js';
import type { EventReaders } from '../runtime/event-readers.js';
import type { ReplicaReads } from '../runtime/replica-reads.js';
import { EventFeed } from '../runtime/event-feed.js';
import type { FeedFailure, FeedStart, Subscription } from '../runtime/feed-subscription.js';
import {
  currentEventPosition,
  type EventStreamQuery,
  type FeedEvent,
} from '../db/repositories/events.js';
import { resumeTokensOf, type ResumeTokens } from '../runtime/resume-tokens.js';
import { eventsRemovedAfter } from '../db/repositories/event-retention.js';
import { StreamSlots } from '../runtime/fleet-stream-slots.js';
import {
  cutWhenIdle,
  ENDED_STREAM_IDLE_MS,
  ENDED_STREAM_IDLE_MS_ON_SHUTDOWN,
} from './stream-connections.js';
import { StreamKeyWatch, type StreamKeyLoss } from '../runtime/stream-key-watch.js';

export interface EventStreamOptions {
  /** Streams one API key may hold open at once in every process (EVENT_STREAMS_PER_KEY). */
  perKey: number;
  /** Quiet time after which a keep-alive comment is sent. */
  keepAliveMs?: number;
  /**
   * Bytes a stream may have waiting for a client that reads slowly, in its queue and in Node's
   * response (beyond what the kernel's socket holds); a live batch that finds them full ends it
   * with SLOW_CONSUMER. A replay fills at most half of them (see `open`).
   */
  bufferBytes?: number;
  /** How often the feed looks for new events. */
  pollMs?: number;
  /** SQLite's reader threads: replays are read there. */
  readers?: EventReaders;
  /** PostgreSQL's read replica: replays are read there when it has what they replay. */
  replica?: ReplicaReads;
}

const DEFAULT_KEEP_ALIVE_MS = 15_000;
const DEFAULT_BUFFER_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n');

function resumeTokenProblem(msg: string): InputRuleError {
  return new InputRuleError([{ loc: ['header', 'Last-Event-ID'], msg, type: 'value_error' }]);
}

/**
 * Where a stream resumed with `token` starts. A token this API did not give the organization
 * (another organization's, garbled, made up) resumes nothing, and neither does a position past
 * the organization's committed events (a decimal token from another database, or made up):
 * resuming there would wait for events that may never come. Both are a 422. A position that
 * retention removed events after is a 410: the client must start again from what is kept.
 */
export async function resumePosition(
  db: Db,
  organizationId: number,
  token: string,
): Promise<number> {
  const tokens = resumeTokensOf(db);
  await tokens.ready();
  const position = tokens.position(organizationId, token);
  if (position === null) {
    throw resumeTokenProblem(
      `"${token.slice(0, 40)}" is not an id this stream sent; send the id of the last message received, as it came, or leave the header out to start anew.`,
    );
  }
  if (position > (await currentEventPosition(db, organizationId))) {
    throw resumeTokenProblem(
      `"${token.slice(0, 40)}" is past the last event of this organization, so this server never sent it; send the id of the last message this organization's stream sent, or leave the header out to follow new events from now (add start_datetime to replay from a time).`,
    );
  }
  if (await eventsRemovedAfter(db, organizationId, position)) {
    throw new EventsRemovedError(
      `Event retention has removed events that came after "${token.slice(0, 40)}", so the stream cannot go on from it without a gap; open it again without Last-Event-ID and with start_datetime to replay the events that are kept.`,
    );
  }
  return position;
}

/** A data field's value may not hold a line break (JSON outside strings may): one line each. */
function dataLines(json: string): string {
  return json.replace(/\r\n|\r|\n/g, '\ndata: ');
}

/** The organization's events as SSE messages, each with its resume token as the id. */
function encodeEvents(
  events: readonly FeedEvent[],
  organizationId: number,
  tokens: ResumeTokens,
): Uint8Array {
  const ids = tokens.make(
    organizationId,
    events.map((event) => event.id),
  );
  let text = '';
  events.forEach(({ json }, index) => {
    text += `id: ${ids[index]}\nevent: event\ndata: ${dataLines(json)}\n\n`;
  });
  return encoder.encode(text);
}

function encodeFailure({ code, detail }: FeedFailure | StreamKeyLoss): Uint8Array {
  return encoder.encode(`event: error\ndata: ${JSON.stringify({ detail, code })}\n\n`);
}

/** The process's event streams: one feed for all of them, and each key's slots in the fleet. */
export class EventStreams {
  readonly #feed: EventFeed<Uint8Array>;
  readonly #tokens: ResumeTokens;
  readonly #slots: StreamSlots;
  readonly #keys: StreamKeyWatch;
  readonly #keepAliveMs: number;
  readonly #bufferBytes: number;
  #closing = false;

  constructor(db: Db, options: EventStreamOptions) {
    this.#tokens = resumeTokensOf(db);
    this.#feed = new EventFeed(db, {
      // Called only for subscriptions, which `open` makes once the tokens are ready.
      encode: (events, organizationId) => encodeEvents(events, organizationId, this.#tokens),
      pollMs: options.pollMs,
      readers: options.readers,
      replica: options.replica,
    });
    this.#keys = new StreamKeyWatch(db);
    this.#slots = new StreamSlots(db, options.perKey);
    this.#keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
    this.#bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES;
  }

  /** Streams one API key may hold open at once, in every server process together. */
  get perKey(): number {
    return this.#slots.perKey;
  }

  /** Streams open in this process. */
  get size(): number {
    return this.#feed.size;
  }

  /** Ends every stream cleanly (SIGTERM): clients reconnect with their last id elsewhere. */
  close(): void {
    this.#closing = true;
    this.#keys.close();
    this.#feed.close();
  }

  /** Once the streams' connections have closed (shutdown): their slots are let go. */
  releaseSlots(): Promise<void> {
    return this.#slots.close();
  }

  /** The stream's response, or null when the key holds its most streams already. */
  async open(
    c: Context,
    keyId: string,
    organizationId: number,
    query: EventStreamQuery,
    start: FeedStart,
  ): Promise<Response | null> {
    await this.#tokens.ready();
    const slot = await this.#slots.take(keyId);
    if (slot === null) return null;
    let released = false;
    let subscription: Subscription | undefined;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    let drained: Array<() => void> = [];
    const wakeReplay = () => {
      for (const resume of drained) resume();
      drained = [];
    };
    // The adapter (@hono/node-server) writes each chunk it reads from the body to Node's
    // response and reads the next only after 'drain': a chunk the socket has not taken waits
    // there, where the body's desiredSize does not see it.
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    outgoing?.on('drain', wakeReplay);
    // The key's slot is held until the connection closes, not only until the stream ends: an
    // ended stream whose client reads slowly still holds its connection and its bytes.
    let slotHeld = true;
    const freeSlot = () => {
      if (!slotHeld) return;
      slotHeld = false;
      this.#slots.release(slot);
    };
    outgoing?.once('close', freeSlot);
    /** Bytes of this stream that wait in the process for its client. */
    // What Node's response holds counts once it has refused more (a 'drain' is then due): below
    // its high-water mark (16 KiB on Node 20, 64 KiB from Node 22) it takes bytes without ever
    // saying 'drain', and a replay waiting on them would wait for the next live batch.
    const held = () =>
      this.#bufferBytes -
      (controller.desiredSize ?? 0) +
      (outgoing?.writableNeedDrain ? outgoing.writableLength : 0);
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(keepAlive);
      outgoing?.off('drain', wakeReplay);
      subscription?.close();
      this.#keys.unwatch(keyId, keyLost);
      wakeReplay();
      if (!outgoing) freeSlot();
    };
    const finish = (last?: Uint8Array) => {
      if (released) return;
      if (last) controller.enqueue(last);
      controller.close();
      release();
      cutWhenIdle(
        outgoing,
        this.#closing ? ENDED_STREAM_IDLE_MS_ON_SHUTDOWN : ENDED_STREAM_IDLE_MS,
      );
    };
    const keyLost = (loss: StreamKeyLoss) => finish(encodeFailure(loss));
    /**
     * Queues bytes for the client. A client whose buffer is already full when more comes has
     * fallen too far behind: it gets SLOW_CONSUMER instead, and false.
     */
    const write = (bytes: Uint8Array): boolean => {
      if (released) return false;
      if (held() >= this.#bufferBytes) {
        finish(
          encodeFailure({
            code: 'SLOW_CONSUMER',
            detail: `This stream's client read too slowly: more than ${this.#bufferBytes} bytes waited for it. Reconnect with the last event id received; nothing is lost.`,
          }),
        );
        return false;
      }
      controller.enqueue(bytes);
      keepAlive.refresh();
      return true;
    };
    const keepAlive = setTimeout(() => {
      if (write(KEEP_ALIVE)) keepAlive.refresh();
    }, this.#keepAliveMs);
    const body = new ReadableStream<Uint8Array>(
      {
        start: (streamController) => {
          controller = streamController;
        },
        // Called whenever the buffer has room again.
        pull: wakeReplay,
        // The client went away.
        cancel: release,
      },
      { highWaterMark: this.#bufferBytes, size: (chunk) => chunk.byteLength },
    );
    // A replay reads its next batch once at most a quarter of the buffer waits, and fills it to
    // half at most: it goes at the pace of the client, and the live batches that follow it find
    // the other half free.
    const replayRoom = async (): Promise<number> => {
      while (!released && held() > this.#bufferBytes / 4) {
        await new Promise<void>((resume) => drained.push(resume));
      }
      return this.#bufferBytes / 2 - held();
    };
    try {
      subscription = await this.#feed.subscribe(organizationId, query, start, {
        send: write,
        ready: replayRoom,
        fail: (failure) => finish(encodeFailure(failure)),
        end: () => finish(),
      });
    } catch (error) {
      release();
      throw error;
    }
    if (!released) this.#keys.watch(keyId, keyLost);
    // The headers go out with this first comment, so the client knows at once the stream is open.
    write(KEEP_ALIVE);
    return c.body(body, 200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // Proxies that buffer answers (nginx) would hold events back.
      'X-Accel-Buffering': 'no',
    });
  }
}
