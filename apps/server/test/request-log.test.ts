// The access log's line per request: what it says of a request, including the SDK's attempt
// number (Agentline-Retry-Count), so that retries can be told apart in the logs.

import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';

let api: TestApi;
let acme: Tenant;

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
});

afterAll(() => api.close());

async function accessLogLine(headers: Record<string, string>): Promise<Record<string, unknown>> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = createApp({ db: api.db, logger: pino({ level: 'info' }, sink) });
  const res = await app.request('/api/v1/events/?limit=1', {
    headers: { 'Service-API-Key': acme.key, ...headers },
  });
  expect(res.status).toBe(200);
  const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const access = entries.filter((entry) => entry.msg === 'request');
  expect(access).toHaveLength(1);
  return access[0]!;
}

describe('the access log', () => {
  it('names the operation, the organization, the key, the status and the time', async () => {
    const line = await accessLogLine({});
    expect(line).toMatchObject({
      method: 'GET',
      path: '/api/v1/events/',
      operation: 'events_list',
      organization_id: acme.organizationId,
      status: 200,
    });
    expect(line.duration_ms).toEqual(expect.any(Number));
    expect(line).not.toHaveProperty('retry_count');
  });

  it("gives the SDK's attempt number as retry_count", async () => {
    expect(await accessLogLine({ 'Agentline-Retry-Count': '2' })).toMatchObject({
      retry_count: 2,
    });
    expect(await accessLogLine({ 'Agentline-Retry-Count': '0' })).toMatchObject({
      retry_count: 0,
    });
  });

  it('leaves out an attempt number that is not a small integer', async () => {
    for (const value of ['-1', '1e3', 'two', '12345', '<script>']) {
      expect(await accessLogLine({ 'Agentline-Retry-Count': value })).not.toHaveProperty(
        'retry_count',
      );
    }
  });
});
