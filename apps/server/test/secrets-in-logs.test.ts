// API keys never reach the logs: not the valid ones, not the wrong ones callers send, not in the
// access log, not in error logs.

import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { parseApiKey } from '../src/domain/api-keys.js';
import { createTenant, createTestApi, type Tenant, type TestApi } from './support/harness.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;
const lines: string[] = [];

beforeAll(async () => {
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  fx = await loadRoutingFixture(api.db, acme.organizationId);
});

afterAll(() => api.close());

describe('logs', () => {
  it('never contain a key secret, whatever the request', async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = createApp({ db: api.db, logger: pino({ level: 'trace' }, sink) });
    const wrong = `${acme.key.slice(0, 17)}${'B'.repeat(32)}`;
    const requests: Array<[string, string, string | undefined, unknown]> = [
      ['GET', '/api/v1/events/', acme.key, undefined],
      ['GET', '/api/v1/events/?limit=abc', acme.key, undefined],
      [
        'GET',
        `/api/v1/events/?search_fields=description&search_field_values=${acme.key}`,
        acme.key,
        undefined,
      ],
      ['GET', '/api/v1/events/', wrong, undefined],
      ['GET', '/api/v1/events/', `Bearer ${acme.key}`, undefined],
      [
        'POST',
        '/api/v1/experiments/',
        acme.key,
        experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
      ],
      ['POST', '/api/v1/experiments/', acme.key, { name: acme.key }],
      ['GET', '/api/v1/nothing-here', acme.key, undefined],
    ];
    for (const [method, url, key, body] of requests) {
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (key) headers['Service-API-Key'] = key;
      await app.request(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    }
    expect(lines.length).toBeGreaterThanOrEqual(requests.length);
    const log = lines.join('');
    for (const secret of [parseApiKey(acme.key)!.secret, 'B'.repeat(32)]) {
      expect(log).not.toContain(secret);
    }
    // The public key id is what the log names, so requests stay traceable to a key.
    expect(log).toContain(parseApiKey(acme.key)!.keyId);
  });
});
