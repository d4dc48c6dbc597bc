// /metrics: off without METRICS_TOKEN, behind the bearer token with it, and counting requests by
// operation and status, their latency, and routed sessions by experiment variant.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import type { Db } from '../src/db/engine/client.js';
import { Metrics } from '../src/http/metrics.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { experimentBody, loadRoutingFixture } from './support/routing-fixture.js';
import { createTestDb } from './support/test-database.js';

const TOKEN = 'metrics-token-for-tests';

let db: Db;
let app: App;
let tenant: Tenant;

beforeAll(async () => {
  db = await createTestDb();
  app = createApp({ db, metricsToken: TOKEN });
  tenant = await createTenant(db, 'Metrics');
});

afterAll(() => db.close());

const scrape = (authorization?: string) =>
  app.request('/metrics', authorization ? { headers: { Authorization: authorization } } : {});

const apiCall = (method: string, path: string, body?: unknown) =>
  app.request(path, {
    method,
    headers: { 'Service-API-Key': tenant.key, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('/metrics', () => {
  it('is a 404 when no token is configured', async () => {
    const unconfigured = createApp({ db });
    expect((await unconfigured.request('/metrics')).status).toBe(404);
  });

  it('asks for the bearer token', async () => {
    const missing = await scrape();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await scrape('Bearer wrong-token-of-some-length')).status).toBe(401);
    expect((await scrape(TOKEN)).status).toBe(401);
  });

  it('counts requests by operation and status, with a latency histogram', async () => {
    expect((await apiCall('GET', '/api/v1/events/?limit=1')).status).toBe(200);
    expect((await apiCall('GET', '/api/v1/events/?limit=1')).status).toBe(200);
    expect((await apiCall('GET', '/api/v1/events/?limit=many')).status).toBe(422);
    expect((await app.request('/no/such/path/1')).status).toBe(404);
    expect((await app.request('/no/such/path/2')).status).toBe(404);

    const response = await scrape(`Bearer ${TOKEN}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('agentline_http_requests_total{operation="events_list",status="200"} 2');
    expect(text).toContain('agentline_http_requests_total{operation="events_list",status="422"} 1');
    // Unknown paths share one label, so clients cannot grow the series without bound.
    expect(text).not.toContain('/no/such/path');
    expect(text).toContain('# TYPE agentline_http_request_duration_seconds histogram');
    expect(text).toMatch(
      /agentline_http_request_duration_seconds_bucket\{operation="events_list",le="\+Inf"\} 3\n/,
    );
    expect(text).toContain(
      'agentline_http_request_duration_seconds_count{operation="events_list"} 3',
    );
    expect(text).not.toContain(tenant.key);
  });

  it('counts routed sessions by experiment and variant', async () => {
    const fixture = await loadRoutingFixture(db, tenant.organizationId);
    const created = await apiCall(
      'POST',
      '/api/v1/experiments/',
      experimentBody(fixture.targets.main, [fixture.agents.pinned, fixture.agents.unpinned]),
    );
    const experiment = (await created.json()) as Schemas['Experiment'];
    expect((await apiCall('POST', `/api/v1/experiments/${experiment.id}/start`)).status).toBe(200);
    for (let session = 0; session < 5; session += 1) {
      const routed = await apiCall(
        'POST',
        `/api/v1/channels/targets/${fixture.targets.main}/sessions`,
        {
          user_id: `user-${session}`,
        },
      );
      expect(routed.status).toBe(200);
    }
    expect(
      (await apiCall('POST', `/api/v1/channels/targets/${fixture.targets.second}/sessions`, {}))
        .status,
    ).toBe(200);

    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    const routedPerVariant = experiment.variants.map((variant) => {
      const line = new RegExp(
        `agentline_sessions_routed_total\\{experiment_id="${experiment.id}",variant_id="${variant.id}"\\} (\\d+)`,
      ).exec(text);
      return Number(line?.[1] ?? 0);
    });
    expect(routedPerVariant.reduce((sum, count) => sum + count, 0)).toBe(5);
    expect(text).toContain('agentline_sessions_routed_total{experiment_id="",variant_id=""} 1');
  });
});

describe('Metrics.render', () => {
  it('writes cumulative buckets and escapes label values', () => {
    const metrics = new Metrics();
    metrics.recordRequest('a"b', 200, 0.002);
    metrics.recordRequest('a"b', 200, 0.3);
    const text = metrics.render();
    expect(text).toContain(
      'agentline_http_request_duration_seconds_bucket{operation="a\\"b",le="0.001"} 0',
    );
    expect(text).toContain(
      'agentline_http_request_duration_seconds_bucket{operation="a\\"b",le="0.0025"} 1',
    );
    expect(text).toContain(
      'agentline_http_request_duration_seconds_bucket{operation="a\\"b",le="0.5"} 2',
    );
    expect(text).toContain('agentline_http_request_duration_seconds_sum{operation="a\\"b"} 0.302');
  });
});
