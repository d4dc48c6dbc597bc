// In-process counters exposed in the Prometheus text format at /metrics. Recording is on every
// request's path (thousands a second), so it only looks up long-lived entries and adds to numbers;
// all string building happens when a scraper asks.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';

/** Upper bounds of the latency buckets, in seconds (+Inf is implied). */
const LATENCY_BUCKETS_SECONDS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

interface LatencyHistogram {
  /** Non-cumulative counts per bucket; the last slot is for durations above every bound. */
  bucketCounts: Float64Array;
  sumSeconds: number;
  count: number;
}

interface OperationStats {
  requestsByStatus: Map<number, number>;
  latency: LatencyHistogram;
}

/**
 * A number read when a scraper asks: a gauge (how many requests wait in the queues now) or a
 * counter kept by whoever counts it (list reads the replica served).
 */
interface ReadMetric {
  help: string;
  read: () => number;
  type: 'gauge' | 'counter';
}

/** Requests without an operation id (health checks, 404s) are labelled by their route pattern. */
export class Metrics {
  private readonly operations = new Map<string, OperationStats>();
  private readonly sessionsByVariant = new Map<string, number>();
  private readonly readMetrics = new Map<string, ReadMetric>();

  /** Reports `read()` as the gauge `name` at each scrape; a second call of one name replaces it. */
  gauge(name: string, help: string, read: () => number): void {
    this.readMetrics.set(name, { help, read, type: 'gauge' });
  }

  /** As gauge, for a count that only grows (read from whoever counts it). */
  counter(name: string, help: string, read: () => number): void {
    this.readMetrics.set(name, { help, read, type: 'counter' });
  }

  recordRequest(operation: string, status: number, durationSeconds: number): void {
    let stats = this.operations.get(operation);
    if (!stats) {
      stats = {
        requestsByStatus: new Map(),
        latency: {
          bucketCounts: new Float64Array(LATENCY_BUCKETS_SECONDS.length + 1),
          sumSeconds: 0,
          count: 0,
        },
      };
      this.operations.set(operation, stats);
    }
    stats.requestsByStatus.set(status, (stats.requestsByStatus.get(status) ?? 0) + 1);
    let bucket = 0;
    while (
      bucket < LATENCY_BUCKETS_SECONDS.length &&
      durationSeconds > LATENCY_BUCKETS_SECONDS[bucket]!
    ) {
      bucket += 1;
    }
    stats.latency.bucketCounts[bucket]! += 1;
    stats.latency.sumSeconds += durationSeconds;
    stats.latency.count += 1;
  }

  /** A routed session; `null` ids mean the target had no running experiment. */
  recordRoutedSession(experimentId: number | null, variantId: number | null): void {
    const key = `${experimentId ?? ''}:${variantId ?? ''}`;
    this.sessionsByVariant.set(key, (this.sessionsByVariant.get(key) ?? 0) + 1);
  }

  /** The Prometheus text exposition format, version 0.0.4. */
  render(): string {
    const lines: string[] = [
      '# HELP agentline_http_requests_total HTTP requests by operation and response status.',
      '# TYPE agentline_http_requests_total counter',
    ];
    for (const [operation, stats] of this.operations) {
      for (const [status, count] of stats.requestsByStatus) {
        lines.push(
          `agentline_http_requests_total{operation="${escapeLabel(operation)}",status="${status}"} ${count}`,
        );
      }
    }
    lines.push(
      '# HELP agentline_http_request_duration_seconds Time from receiving a request to its response, by operation.',
      '# TYPE agentline_http_request_duration_seconds histogram',
    );
    for (const [operation, { latency }] of this.operations) {
      const label = `operation="${escapeLabel(operation)}"`;
      let cumulative = 0;
      LATENCY_BUCKETS_SECONDS.forEach((bound, index) => {
        cumulative += latency.bucketCounts[index]!;
        lines.push(
          `agentline_http_request_duration_seconds_bucket{${label},le="${bound}"} ${cumulative}`,
        );
      });
      lines.push(
        `agentline_http_request_duration_seconds_bucket{${label},le="+Inf"} ${latency.count}`,
        `agentline_http_request_duration_seconds_sum{${label}} ${latency.sumSeconds}`,
        `agentline_http_request_duration_seconds_count{${label}} ${latency.count}`,
      );
    }
    lines.push(
      '# HELP agentline_sessions_routed_total Sessions routed, by experiment and variant (empty when no experiment ran on the target).',
      '# TYPE agentline_sessions_routed_total counter',
    );
    for (const [key, count] of this.sessionsByVariant) {
      const [experimentId, variantId] = key.split(':');
      lines.push(
        `agentline_sessions_routed_total{experiment_id="${experimentId}",variant_id="${variantId}"} ${count}`,
      );
    }
    for (const [name, { help, read, type }] of this.readMetrics) {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${read()}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** GET /metrics for a scraper that sends `Authorization: Bearer <token>`. */
export function metricsEndpoint(metrics: Metrics, token: string): MiddlewareHandler {
  // Comparing digests keeps the comparison constant-time whatever the presented length.
  const expected = sha256(`Bearer ${token}`);
  return async (c) => {
    const presented = c.req.header('authorization') ?? '';
    if (!timingSafeEqual(sha256(presented), expected)) {
      c.header('WWW-Authenticate', 'Bearer realm="metrics"');
      return c.text('A valid bearer token (METRICS_TOKEN) is required.\n', 401);
    }
    c.header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    c.header('Cache-Control', 'no-store');
    return c.body(metrics.render());
  };
}
