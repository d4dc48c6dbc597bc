// The clients of the replay tests (events-stream-replay*.test.ts): a /healthz loop that times
// the server beside the replays, and a reader that takes a stream as fast as it comes; and the
// events they replay.

import { Worker } from 'node:worker_threads';
import type { EventToImport } from '../../src/db/repositories/event-import.js';

export interface HealthzLoop {
  /** Resolves once the loop is warm and timing. */
  started: Promise<void>;
  /** Stops the loop and resolves with every answer's time in ms, in the order asked. */
  stop(): Promise<number[]>;
}

/**
 * GET /healthz one after the other on a thread of its own, so that the times measured are the
 * server's, not this thread's, which parses the streams meanwhile.
 */
export function healthzLoop(baseUrl: string): HealthzLoop {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    let stopping = false;
    let times = [];
    parentPort.on('message', () => (stopping = true));
    (async () => {
      for (let warm = 0; warm < 20; warm += 1) await (await fetch(workerData.url)).arrayBuffer();
      parentPort.postMessage({ started: true });
      while (!stopping) {
        const began = performance.now();
        const answer = await fetch(workerData.url);
        await answer.arrayBuffer();
        if (answer.status !== 200) throw new Error('healthz answered ' + answer.status);
        times.push(performance.now() - began);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      parentPort.postMessage({ times });
    })();
    `,
    { eval: true, workerData: { url: `${baseUrl}/healthz` } },
  );
  const started = new Promise<void>((resolve) => worker.once('message', () => resolve()));
  return {
    started,
    stop: async () => {
      const done = new Promise<number[]>((resolve, reject) => {
        worker.on('message', (message: { times?: number[] }) => {
          if (message.times) resolve(message.times);
        });
        worker.once('error', reject);
      });
      worker.postMessage('stop');
      const times = await done;
      await worker.terminate();
      return times;
    },
  };
}

export function percentile(sorted: readonly number[], share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]!;
}

export interface ReplayRead {
  /** attributes.n of each event, in the order received. */
  numbers: number[];
  ids: Set<string>;
  errors: string[];
}

/** Reads the stream as fast as it comes until `count` events arrived, parsing only what it checks. */
export async function readReplay(response: Response, count: number): Promise<ReplayRead> {
  const read: ReplayRead = { numbers: [], ids: new Set(), errors: [] };
  const decoder = new TextDecoder();
  let pending = '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  while (read.numbers.length < count && read.errors.length === 0) {
    const { done, value } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    const messages = pending.split('\n\n');
    pending = messages.pop()!;
    for (const message of messages) {
      if (message.startsWith(':')) continue;
      if (message.includes('event: error')) {
        read.errors.push(message);
        continue;
      }
      read.ids.add(/^id: (.*)$/m.exec(message)![1]!);
      read.numbers.push(Number(/"n":(\d+)/.exec(message)![1]));
    }
  }
  await reader.cancel();
  return read;
}

/** The n-th event written to an organization; `key` tells apart the import keys of a set. */
export function replayedEvent(n: number, key = 'replay'): EventToImport {
  return {
    importKey: `${key}-${n}`,
    timestamp: '2026-06-01T00:00:00.000Z',
    sessionId: `s-${n % 97}`,
    conversationId: null,
    source: 'replay',
    sourceId: null,
    category: 'replay',
    type: 'replayed',
    userId: null,
    description: `replayed event number ${n}`,
    attributes: JSON.stringify({ n }),
  };
}
