// Bounded autocannon runs reduced to the numbers the benchmarks report.

import autocannon from 'autocannon';
import { newIdempotencyKey } from '../../packages/sdk/src/index.js';
import { columns } from './report.js';

/** One autocannon run, bounded by time only. */
export async function load(options: {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sends a new Idempotency-Key with every request, made as the SDK makes one for every POST. */
  freshIdempotencyKeys?: boolean;
  /** The path (and query) of the n-th request (n from 0), instead of the url's on all of them. */
  pathOf?: (n: number) => string;
  /** The body of each request, made anew for each one. */
  bodyOf?: () => string;
  /** The headers of the n-th request (n from 0), instead of `headers` on all of them. */
  headersOf?: (n: number) => Record<string, string>;
}) {
  let sent = 0;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.freshIdempotencyKeys || options.pathOf || options.bodyOf || options.headersOf
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => {
                const n = sent;
                sent += 1;
                const headers = { ...request.headers, ...options.headersOf?.(n) };
                return {
                  ...request,
                  ...(options.pathOf ? { path: options.pathOf(n) } : {}),
                  ...(options.bodyOf ? { body: options.bodyOf() } : {}),
                  headers: options.freshIdempotencyKeys
                    ? { ...headers, 'Idempotency-Key': newIdempotencyKey() }
                    : headers,
                };
              },
            },
          ],
        }
      : {}),
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
