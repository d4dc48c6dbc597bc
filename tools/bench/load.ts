// Bounded autocannon runs reduced to the numbers the benchmarks report.

import autocannon from 'autocannon';

export interface LoadResult {
  requests: number;
  non2xx: number;
  errors: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** One bounded autocannon run (a fixed duration and at most `maxRequests` requests). */
export async function load(options: {
  url: string;
  connections: number;
  seconds: number;
  maxRequests?: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.maxRequests ? { amount: options.maxRequests } : {}),
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body ? { body: options.body } : {}),
  });
  return {
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

export function formatRow(label: string, r: LoadResult): string {
  return `${label.padEnd(38)} ${r.p50Ms.toFixed(2).padStart(8)} ${r.p99Ms.toFixed(2).padStart(8)} ${Math.round(r.requestsPerSecond).toString().padStart(9)} ${String(r.requests).padStart(9)} ${String(r.non2xx + r.errors).padStart(7)}`;
}

export const TABLE_HEADER = `${'shape'.padEnd(38)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'req/s'.padStart(9)} ${'requests'.padStart(9)} ${'errors'.padStart(7)}`;
