// The webhooks benchmark's receivers (webhooks.ts), in a process of their own so that their work
// is not counted in the load generator's latencies. `node --import tsx
// tools/bench/webhook-receivers.ts <answer ms>` listens on 127.0.0.1 and prints `port <n>`.
// POST /ok/<endpoint>: answers 204 after <answer ms>, and notes the message's delay from its
// event's write (`data.attributes.written_at`, set by event-writer.ts) to its arrival, and whether
// its `webhook-id` was seen before. POST /stuck/<endpoint>: never answers (the server's attempt
// times out). Each line on stdin asks for one JSON line of what arrived so far; it exits when
// stdin closes.

import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

const answerMs = Number(process.argv[2] ?? '50');
const delays: number[] = [];
const seenIds = new Set<string>();
const perEndpoint = new Map<string, number>();
let duplicates = 0;
let stuckAttempts = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const arrived = Date.now();
    const [, kind, endpoint] = (req.url ?? '').split('/');
    if (kind === 'stuck') {
      stuckAttempts += 1;
      return;
    }
    const id = String(req.headers['webhook-id']);
    if (seenIds.has(id)) duplicates += 1;
    else seenIds.add(id);
    perEndpoint.set(endpoint!, (perEndpoint.get(endpoint!) ?? 0) + 1);
    const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      data?: { attributes?: { written_at?: number } };
    };
    const writtenAt = message.data?.attributes?.written_at;
    if (typeof writtenAt === 'number') delays.push(arrived - writtenAt);
    setTimeout(() => res.writeHead(204).end(), answerMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address) process.stdout.write(`port ${address.port}\n`);
});

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

const lines = createInterface({ input: process.stdin });
lines.on('line', () => {
  const sorted = [...delays].sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({
      delivered: seenIds.size,
      duplicates,
      stuckAttempts,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? null,
      fewestPerEndpoint: Math.min(...perEndpoint.values()),
      endpoints: perEndpoint.size,
    })}\n`,
  );
});
lines.on('close', () => {
  server.closeAllConnections();
  server.close();
});
