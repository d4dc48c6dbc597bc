// The end of the day benchmark (day.ts): the varied lists alone at full speed, beside bare Hono
// answering the same bytes.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DayTenant } from './day-tenants.js';
import { listPath, randomListQuery } from './day-queries.js';
import { load, type LoadResult } from './load.js';
import { SERVER_DIR, type BenchDatabase } from './harness.js';
import { ms } from './report.js';

/** Connections in all, shared among the entries, and among the two bare processes. */
const CONNECTIONS = 16;

/**
 * The varied lists alone at full speed, CONNECTIONS connections over `entries` (the server
 * processes, or HAProxy in front of them), then the same paths against two bare Hono processes
 * answering bytes sampled from the real answers, for `seconds` each. Prints both and returns the
 * ratio of their throughputs.
 */
export async function closedLoop(
  tenants: readonly DayTenant[],
  entries: readonly string[],
  database: BenchDatabase,
  seconds: number,
): Promise<number> {
  const bodies: string[] = [];
  for (let i = 0; i < 64; i += 1) {
    const tenant = tenants[i % tenants.length]!;
    const path = listPath(randomListQuery(tenant.organizationId));
    const answer = await fetch(`${entries[i % entries.length]!}${path}`, {
      headers: { 'Service-API-Key': tenant.dashboardKey },
    });
    if (answer.ok) bodies.push(await answer.text());
  }
  const bodiesFile = join(database.directory, 'bare-bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  const bares: Array<Awaited<ReturnType<typeof startBareBodiesServer>>> = [];
  try {
    bares.push(await startBareBodiesServer(bodiesFile), await startBareBodiesServer(bodiesFile));
    const run = async (urls: readonly string[]) => {
      const results = await Promise.all(
        urls.map((url) =>
          load({
            url,
            connections: CONNECTIONS / urls.length,
            seconds,
            requestOf: () => {
              const tenant = tenants[Math.floor(Math.random() * tenants.length)]!;
              return {
                path: listPath(randomListQuery(tenant.organizationId)),
                headers: { 'Service-API-Key': tenant.dashboardKey },
              };
            },
          }),
        ),
      );
      return combined(results);
    };
    const varied = await run(entries);
    await database.settle();
    const bare = await run(bares.map((b) => b.url));
    const ratio = varied.requestsPerSecond / bare.requestsPerSecond;
    console.log(
      `\nclosed loop, varied lists alone (${CONNECTIONS} connections over ${entries.length === 1 ? 'HAProxy' : 'both processes'}, ${seconds} s each):`,
    );
    for (const [label, r] of [
      ['server', varied],
      ['bare Hono, same bytes', bare],
    ] as const) {
      console.log(
        `${label.padEnd(22)} p50 ${ms(r.p50Ms)} ms, p99 ${ms(r.p99Ms)} ms, ${Math.round(r.requestsPerSecond)} req/s, ${r.requests} requests, non-2xx ${r.non2xx} (429: ${r.refused}), errors ${r.errors}`,
      );
    }
    console.log(`varied / bare (req/s): ${ratio.toFixed(2)}`);
    return ratio;
  } finally {
    for (const bare of bares) bare.stop();
  }
}

/** Two runs side by side as one: their rates add up; the latencies are the worse of the two. */
function combined(results: readonly LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number) => results.reduce((t, r) => t + pick(r), 0);
  const worst = (pick: (r: LoadResult) => number) => Math.max(...results.map(pick));
  return {
    requests: sum((r) => r.requests),
    non2xx: sum((r) => r.non2xx),
    refused: sum((r) => r.refused),
    errors: sum((r) => r.errors),
    requestsPerSecond: sum((r) => r.requestsPerSecond),
    p50Ms: worst((r) => r.p50Ms),
    p99Ms: worst((r) => r.p99Ms),
  };
}

/**
 * A bare Hono app in a process of its own, like the real server: any GET answers one of the
 * bodies in `bodiesFile` as application/json, the same one for the same path and query, with none
 * of the work behind them. Run in the server's folder, which has Hono.
 */
async function startBareBodiesServer(bodiesFile: string) {
  const code = `
    import { readFileSync } from 'node:fs';
    import { serve } from '@hono/node-server';
    import { Hono } from 'hono';
    const bodies = JSON.parse(readFileSync(${JSON.stringify(bodiesFile)}, 'utf8'));
    const app = new Hono();
    app.get('*', (c) => {
      let hash = 0;
      for (const char of c.req.url) hash = (hash * 31 + char.charCodeAt(0)) | 0;
      const body = bodies[Math.abs(hash) % bodies.length];
      return c.body(body, 200, { 'content-type': 'application/json' });
    });
    serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) =>
      console.log('port ' + info.port));`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: SERVER_DIR,
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const match = /port (\d+)/.exec(chunk.toString());
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the bare server exited (${code}): ${errors}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}
