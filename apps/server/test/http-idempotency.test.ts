// Idempotency-Key: retries of a POST get the first answer and change nothing more.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimIdempotencyKey } from '../src/db/repositories/idempotency.js';
import { experiments, sessions } from '../src/db/schema.js';
import { type Tenant, type TestApi } from './support/harness.js';
import {
  experimentBody,
  createRoutingTestbed,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

const post = (path: string, body: unknown, key: string) =>
  api.request('POST', path, { key: acme.key, body, headers: { 'Idempotency-Key': key } });

async function sessionCount(): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(
    api.db,
    sql`SELECT count(*) AS n FROM ${sessions}`,
  );
  return row!.n;
}

describe('Idempotency-Key', () => {
  it('replays the first routed session to a retry and stores it once', async () => {
    const before = await sessionCount();
    const first = await post(
      `/api/v1/channels/targets/${fx.targets.main}/sessions`,
      { user_id: 'u' },
      'route-1',
    );
    const retry = await post(
      `/api/v1/channels/targets/${fx.targets.main}/sessions`,
      { user_id: 'u' },
      'route-1',
    );
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await sessionCount()).toBe(before + 1);
    // A new key is a new request.
    const other = await post(
      `/api/v1/channels/targets/${fx.targets.main}/sessions`,
      { user_id: 'u' },
      'route-2',
    );
    expect(other.body.session_id).not.toBe(first.body.session_id);
  });

  it('creates an experiment once however often the create is retried', async () => {
    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]);
    const answers = [];
    for (let i = 0; i < 3; i += 1)
      answers.push(await post('/api/v1/experiments/', body, 'create-1'));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    const stored = await queryTestDb(
      api.db,
      sql`SELECT id FROM ${experiments} WHERE ${experiments.id} = ${answers[0]!.body.id}`,
    );
    expect(stored).toHaveLength(1);
  });

  it('replays an error answer too', async () => {
    const bad = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.pinned]);
    const first = await post('/api/v1/experiments/', bad, 'bad-1');
    const retry = await post('/api/v1/experiments/', bad, 'bad-1');
    expect(first.status).toBe(422);
    expect(retry.status).toBe(422);
    expect(retry.body).toEqual(first.body);
  });

  it('answers 422 when the key is reused for a different request', async () => {
    await post(`/api/v1/channels/targets/${fx.targets.main}/sessions`, { user_id: 'a' }, 'reuse-1');
    const res = await post(
      `/api/v1/channels/targets/${fx.targets.main}/sessions`,
      { user_id: 'b' },
      'reuse-1',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['header', 'Idempotency-Key'],
      type: 'value_error',
    });
  });

  it('answers 409 while the first request with the key is still running', async () => {
    const { keyId } = { keyId: acme.key.split('_')[1]! };
    const path = `/api/v1/channels/targets/${fx.targets.main}/sessions`;
    const body = JSON.stringify({ user_id: 'slow' });
    // Claim the key as a request in flight would have, then retry it.
    const { createHash } = await import('node:crypto');
    const hash = createHash('sha256').update(`POST ${path}\n${body}`).digest('hex');
    expect(await claimIdempotencyKey(api.db, keyId, 'flight-1', hash)).toEqual({ kind: 'claimed' });
    const res = await post(path, { user_id: 'slow' }, 'flight-1');
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('still running');
  });

  it('lets exactly one of many concurrent claims of a key run', async () => {
    const claims = await Promise.all(
      Array.from({ length: 20 }, () => claimIdempotencyKey(api.db, 'key-c', 'race-1', 'h')),
    );
    const kinds = claims.map((claim) => claim.kind);
    expect(kinds.filter((kind) => kind === 'claimed')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'in_flight')).toHaveLength(19);
  });

  it('keeps keys apart per API key, and forgets them after 24 hours', async () => {
    const hash = 'h';
    expect(
      await claimIdempotencyKey(api.db, 'key-a', 'k', hash, new Date('2026-01-01T00:00:00Z')),
    ).toEqual({ kind: 'claimed' });
    expect(
      await claimIdempotencyKey(api.db, 'key-b', 'k', hash, new Date('2026-01-01T00:00:00Z')),
    ).toEqual({ kind: 'claimed' });
    expect(
      await claimIdempotencyKey(api.db, 'key-a', 'k', hash, new Date('2026-01-01T01:00:00Z')),
    ).toEqual({ kind: 'in_flight' });
    expect(
      await claimIdempotencyKey(api.db, 'key-a', 'k', hash, new Date('2026-01-02T00:00:01Z')),
    ).toEqual({ kind: 'claimed' });
  });

  it('leaves requests without the header alone', async () => {
    const before = await sessionCount();
    await api.request('POST', `/api/v1/channels/targets/${fx.targets.main}/sessions`, {
      key: acme.key,
      body: {},
    });
    await api.request('POST', `/api/v1/channels/targets/${fx.targets.main}/sessions`, {
      key: acme.key,
      body: {},
    });
    expect(await sessionCount()).toBe(before + 2);
  });
});
