// The webhooks benchmark's receivers (webhooks.ts), a process of their own so that their work is
// not the load generator's: `<answer ms>`; listens on 127.0.0.1 and prints `port <n>`. POST
// /ok/<endpoint> answers 204 after <answer ms>, noting the delay from its event's write
// (`data.attributes.written_at`, event-writer.ts) and whether its `webhook-id` came before; POST
// /stuck/<endpoint> never answers. Each stdin line asks for a JSON line of what arrived so far.

import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { Latencies } from './report.js';

const answerMs = Number(process.argv[2] ?? '50');
const delays = new Latencies();
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
    if (typeof writtenAt === 'number') delays.add(arrived - writtenAt);
    setTimeout(() => res.writeHead(204).end(), answerMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address) process.stdout.write(`port ${address.port}\n`);
});

const lines = createInterface({ input: process.stdin });
// Each percentile null without a delay (JSON has no NaN).
lines.on('line', () => {
  process.stdout.write(
    `${JSON.stringify({
      delivered: seenIds.size,
      duplicates,
      stuckAttempts,
      p50: delays.percentile(50),
      p99: delays.percentile(99),
      max: delays.percentile(100),
      fewestPerEndpoint: Math.min(...perEndpoint.values()),
    })}\n`,
  );
});
lines.on('close', () => {
  server.closeAllConnections();
  server.close();
});
