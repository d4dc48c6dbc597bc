// The hostile benchmark's flood (hostile.ts), in a process of its own: writing megabytes a second
// from the benchmark's event loop would delay its own timed requests, and the neighbour's latency
// would then measure the client instead of the server.
// `node --import tsx tools/bench/body-flood.ts <url> <api key> <clients> <seconds>`: POSTs a 1 MB
// JSON array of 500,000 numbers from each of `clients` connections, each again as soon as it is
// answered, for `seconds`; then prints one JSON line, `{"<status> <code>": count, ...}`.

import { Agent, request } from 'node:http';

const [url, key, clients, seconds] = process.argv.slice(2);
const body = Buffer.from(`[${'1,'.repeat(499_999)}1]`);
const agent = new Agent({ keepAlive: true });
const until = performance.now() + Number(seconds) * 1000;
const answers: Record<string, number> = {};

function post(): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url!, {
      method: 'POST',
      agent,
      headers: {
        'Service-API-Key': key!,
        'Content-Type': 'application/json',
        'Content-Length': String(body.length),
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        const { code, detail } = JSON.parse(text) as { code?: string; detail?: unknown };
        const type = Array.isArray(detail) ? (detail[0] as { type: string }).type : '';
        resolve(`${res.statusCode} ${code ?? type}`);
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

await Promise.all(
  Array.from({ length: Number(clients) }, async () => {
    while (performance.now() < until) {
      const answer = await post();
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
  }),
);
agent.destroy();
console.log(JSON.stringify(answers));
