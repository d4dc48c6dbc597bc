// A webhook receiver on 127.0.0.1 (an ephemeral port): records every request's headers and body,
// and answers as the test tells it to: a status, slowly, a redirect, or a body far larger than a
// sender should read.

import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface ReceiverAnswer {
  status: number;
  body?: string;
  /** Waits this long before answering. */
  delayMs?: number;
  /** Sends this many bytes of body (in 64 KiB chunks, as fast as the client takes them). */
  bodyBytes?: number;
  headers?: Record<string, string>;
}

export type AnswerFor = (request: ReceivedRequest, index: number) => ReceiverAnswer;

export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  /** The most requests it has held unanswered at once. */
  readonly mostInFlight: number;
  /** Changes how later requests are answered. */
  answerWith(answer: AnswerFor): void;
  /** Resolves once `count` requests have arrived, or fails after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');

export async function startWebhookReceiver(
  answer: AnswerFor = () => ({ status: 204 }),
): Promise<WebhookReceiver> {
  let answerFor = answer;
  const received: ReceivedRequest[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const server: Server = createServer((req, res) => {
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    res.once('close', () => (inFlight -= 1));
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const request = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(parts).toString(),
      };
      const index = received.push(request) - 1;
      const { status, body, delayMs = 0, bodyBytes, headers = {} } = answerFor(request, index);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(status, headers);
        if (bodyBytes === undefined) return void res.end(body);
        let left = bodyBytes;
        const write = () => {
          while (left > 0 && !res.destroyed) {
            const chunk = CHUNK.subarray(0, Math.min(left, CHUNK.length));
            left -= chunk.length;
            if (!res.write(chunk)) return void res.once('drain', write);
          }
          if (!res.destroyed) res.end();
        };
        write();
      }, delayMs);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    get mostInFlight() {
      return mostInFlight;
    },
    answerWith: (next) => {
      answerFor = next;
    },
    waitFor: async (count, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) {
          throw new Error(
            `the receiver got ${received.length} requests, not ${count}, in ${timeoutMs} ms`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return received;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
