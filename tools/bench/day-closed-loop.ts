// The end of the day benchmark (day.ts): the varied lists alone at full speed, beside bare Hono
// answering the same bytes.

import { startBareBodiesServer, type BareServer } from './bare-server.js';
import type { DayTenant } from './day-tenants.js';
import { listPath, randomListQuery } from './day-queries.js';
import { load, type LoadResult } from './load.js';

/** Connections in all, shared among the entries, and among the two bare processes. */
const CONNECTIONS = 16;

const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(1));

/**
 * The varied lists alone at full speed, CONNECTIONS connections over `entries` (the server
 * processes, or HAProxy in front of them), then the same paths against two bare Hono processes
 * answering bytes sampled from the real answers, for `seconds` each. Prints both and returns the
 * ratio of their throughputs.
 */
export async function closedLoop(options: {
  tenants: readonly DayTenant[];
  entries: readonly string[];
  directory: string;
  seconds: number;
  settle: () => Promise<void>;
}): Promise<number> {
  const { tenants, entries, seconds } = options;
  const draws = new Map<number, { path: string; key: string }>();
  /** The n-th request's draw, the same for its path and its headers; forgotten after both. */
  const draw = (n: number) => {
    let drawn = draws.get(n);
    if (!drawn) {
      const tenant = tenants[Math.floor(Math.random() * tenants.length)]!;
      drawn = { path: listPath(randomListQuery(tenant.organizationId)), key: tenant.dashboardKey };
      draws.set(n, drawn);
    } else {
      draws.delete(n);
    }
    return drawn;
  };
  const bodies: string[] = [];
  for (let i = 0; i < 64; i += 1) {
    const tenant = tenants[i % tenants.length]!;
    const path = listPath(randomListQuery(tenant.organizationId));
    const answer = await fetch(`${entries[i % entries.length]!}${path}`, {
      headers: { 'Service-API-Key': tenant.dashboardKey },
    });
    if (answer.ok) bodies.push(await answer.text());
  }
  const bares: BareServer[] = [];
  try {
    bares.push(
      await startBareBodiesServer(options.directory, bodies),
      await startBareBodiesServer(options.directory, bodies),
    );
    const run = async (urls: readonly string[]) => {
      const results = await Promise.all(
        urls.map((url) =>
          load({
            url,
            connections: CONNECTIONS / urls.length,
            seconds,
            pathOf: (n) => draw(n).path,
            headersOf: (n) => ({ 'Service-API-Key': draw(n).key }),
          }),
        ),
      );
      return combined(results);
    };
    const varied = await run(entries);
    await options.settle();
    const bare = await run(bares.map((b) => b.url.replace(/\/$/, '')));
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
