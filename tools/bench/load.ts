// Bounded autocannon runs reduced to the numbers the benchmarks report.

import autocannon from 'autocannon';
import { columns } from './report.js';

/** One autocannon run, bounded by time only. */
export async function load(options: {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** What each request changes of the url's as it is sent: its path, headers added, a body. */
  requestOf?: () => Partial<{ path: string; headers: Record<string, string>; body: string }>;
}) {
  const { requestOf } = options;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(requestOf && {
      requests: [
        {
          setupRequest: (request: autocannon.Request) => {
            const { headers, ...change } = requestOf();
            return { ...request, ...change, headers: { ...request.headers, ...headers } };
          },
        },
      ],
    }),
  });
  return {
    requests: result.requests.total,
    non2xx: result.non2xx,
    /** Of the non-2xx answers, the 429s (a busy key's refused requests). */
    refused: result.statusCodeStats?.['429']?.count ?? 0,
    errors: result.errors,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

export type LoadResult = Awaited<ReturnType<typeof load>>;

const loadRow = columns(38, 8, 8, 9, 9, 7);

export const TABLE_HEADER = loadRow('shape', 'p50 ms', 'p99 ms', 'req/s', 'requests', 'errors');

export function formatRow(label: string, r: LoadResult): string {
  return loadRow(
    label,
    r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2),
    Math.round(r.requestsPerSecond),
    r.requests,
    r.non2xx + r.errors,
  );
}
