// The events-stream benchmark's clients (events-stream.ts), in a process of their own: 1,000
// streams reading hundreds of MiB a second would otherwise share an event loop with the load
// generator, whose latencies would then measure the readers' work instead of the server's.
// `node --import tsx tools/bench/stream-readers.ts <base url> <api key> <streams> <sampled>`:
// opens the streams ("now", no filter) and prints `open` once all answered 200. Each line on its
// stdin asks for one JSON line: the sampled streams' delivery delays since the last one (write to
// arrival: p50, p99, max, how many), the events they parsed and the bytes the other streams read;
// it exits when its stdin closes.

import { Agent, request, type ClientRequest } from 'node:http';
import { createParser } from 'eventsource-parser';

const [baseUrl, key, streams, sampledArg] = process.argv.slice(2);
const streamCount = Number(streams);
const sampled = Number(sampledArg);
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const delays: number[] = [];
let bytes = 0;
let received = 0;
const requests: ClientRequest[] = [];

await Promise.all(
  Array.from(
    { length: streamCount },
    (_, index) =>
      new Promise<void>((resolve, reject) => {
        const req = request(
          `${baseUrl}/api/v1/events/stream`,
          { headers: { 'Service-API-Key': key! }, agent },
          (res) => {
            if (res.statusCode !== 200) {
              reject(new Error(`stream ${index}: status ${res.statusCode}`));
              return;
            }
            resolve();
            if (index < sampled) {
              const parser = createParser({
                onEvent(message) {
                  const event = JSON.parse(message.data) as {
                    attributes?: { written_at?: number };
                  };
                  received += 1;
                  const writtenAt = event.attributes?.written_at;
                  if (writtenAt) delays.push(Date.now() - writtenAt);
                },
              });
              res.setEncoding('utf8');
              res.on('data', (text: string) => parser.feed(text));
            } else {
              res.on('data', (chunk: Buffer) => (bytes += chunk.length));
            }
          },
        );
        req.on('error', () => undefined);
        req.end();
        requests.push(req);
      }),
  ),
);
process.stdout.write('open\n');
function report(): string {
  delays.sort((a, b) => a - b);
  const percentile = (p: number) =>
    delays.length === 0 ? null : delays[Math.min(delays.length - 1, Math.floor(delays.length * p))];
  const summary = {
    p50: percentile(0.5),
    p99: percentile(0.99),
    max: delays.at(-1) ?? null,
    count: delays.length,
    received,
    bytes,
  };
  delays.length = 0;
  received = 0;
  bytes = 0;
  return `${JSON.stringify(summary)}\n`;
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (text: string) => {
  for (let lines = text.split('\n').length - 1; lines > 0; lines -= 1) {
    process.stdout.write(report());
  }
});
process.stdin.on('end', () => {
  for (const req of requests) req.destroy();
  process.exit(0);
});
