// Request bodies over a real socket: the size limit (declared or streamed without a length),
// malformed JSON, and the headers every response carries.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import type { Db } from '../src/db/engine/client.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { SECURITY_HEADERS } from '../src/http/request-context.js';
import { sendRaw, startLiveServer, type LiveServer } from './support/live-server.js';
import { createTestDb } from './support/test-database.js';

const LIMIT = 4096;
let db: Db;
let server: LiveServer;
let acme: Tenant;

beforeAll(async () => {
  db = await createTestDb();
  acme = await createTenant(db, 'Acme');
  server = await startLiveServer(createApp({ db, bodyLimitBytes: LIMIT }), {
    bodyLimitBytes: LIMIT,
  });
});

afterAll(async () => {
  await server.close();
  await db.close();
});

/**
 * Sends a POST with a key and a JSON Content-Type, optionally without Content-Length (chunked).
 * `T` is the body expected, as for `TestApi.request` (harness.ts).
 */
function post<T>(path: string, chunks: string[], { chunked = false } = {}) {
  const total = chunks.reduce((n, c) => n + Buffer.byteLength(c), 0);
  return sendRaw<T>(server.baseUrl, {
    path,
    chunks,
    headers: {
      'Service-API-Key': acme.key,
      'Content-Type': 'application/json',
      ...(chunked ? {} : { 'Content-Length': String(total) }),
    },
  });
}

const big = JSON.stringify({ name: 'x'.repeat(LIMIT), target_id: 1, variants: [] });

describe('request bodies', () => {
  it('answers 413 for a body whose declared length is over the limit', async () => {
    const res = await post<Schemas['ErrorResponse']>('/api/v1/experiments/', [big]);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      request_id: res.headers['x-request-id'],
    });
    expect(res.body.detail).toContain(`${LIMIT} bytes`);
  });

  it('answers 413 for a streamed body that grows past the limit', async () => {
    const res = await post('/api/v1/experiments/', [big.slice(0, 2000), big.slice(2000)], {
      chunked: true,
    });
    expect(res.status).toBe(413);
  });

  it('reads a streamed body under the limit', async () => {
    const body = JSON.stringify({ name: 'x', target_id: 1, variants: [] });
    const res = await post<Schemas['HTTPValidationError']>(
      '/api/v1/experiments/',
      [body.slice(0, 10), body.slice(10)],
      { chunked: true },
    );
    // Read and validated: the variants rule answers, not the transport.
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['body', 'variants']);
  });

  it('answers 422 json_invalid for a body that is not JSON', async () => {
    const res = await post<Schemas['HTTPValidationError']>('/api/v1/experiments/', ['{"name": ']);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      { loc: ['body'], msg: 'The request body is not valid JSON.', type: 'json_invalid' },
    ]);
  });

  it('sends the security headers and a request id on every answer', async () => {
    const res = await post('/api/v1/experiments/', ['{}']);
    expect(res.headers['x-request-id']).toMatch(/.+/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  // Served through Node, the envelope goes on Node's own response, not on the app's answer.
  it('sends every security header and the echoed request id on a plain 200', async () => {
    const res = await fetch(`${server.baseUrl}/healthz`, {
      headers: { 'X-Request-Id': 'probe-42' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('probe-42');
    for (const [name, value] of SECURITY_HEADERS) expect(res.headers.get(name)).toBe(value);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
