// Idempotency-Key: retries of a POST get the first answer and change nothing more.

import { sql } from 'drizzle-orm';
import { DEFAULT_CONFIG, idempotencyTimesOf } from '../src/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  claimIdempotencyKey,
  storeIdempotentAnswer,
  sweepExpiredIdempotencyKeys,
} from '../src/db/repositories/idempotency.js';
import { parseApiKey } from '../src/domain/api-keys.js';
import { canonicalJson } from '../src/domain/canonical-json.js';
import { requestFingerprint } from '../src/http/idempotency.js';
import { experiments, idempotencyKeys, sessions } from '../src/db/schema/sqlite.js';
import { createKey, type Schemas, type Tenant, type TestApi } from './support/harness.js';
import {
  experimentBody,
  createRoutingTestbed,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { queryTestDb } from './support/test-database.js';

const TIMES = idempotencyTimesOf(DEFAULT_CONFIG);

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

/** `T` is the body expected, as for `TestApi.request`. */
const post = <T>(path: string, body: unknown, key: string) =>
  api.request<T>('POST', path, { key: acme.key, body, headers: { 'Idempotency-Key': key } });

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
    const first = await post<Schemas['RoutedSession']>(
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
    const other = await post<Schemas['RoutedSession']>(
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
      answers.push(await post<Schemas['Experiment']>('/api/v1/experiments/', body, 'create-1'));
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
    const res = await post<Schemas['HTTPValidationError']>(
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

  it('replays to a retry whose JSON differs only in whitespace and key order', async () => {
    /** `value` with the keys of every object in reverse order. */
    const reversedKeys = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(reversedKeys);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.entries(value)
          .reverse()
          .map(([key, item]) => [key, reversedKeys(item)]),
      );
    };
    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
      name: 'Re-serialised retry',
    });
    const first = await post<Schemas['Experiment']>(
      '/api/v1/experiments/',
      JSON.stringify(body),
      'reserialised-1',
    );
    expect(first.status).toBe(200);
    const retry = await post<Schemas['Experiment']>(
      '/api/v1/experiments/',
      ` ${JSON.stringify(reversedKeys(body), null, 2)}\r\n`,
      'reserialised-1',
    );
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);

    // Array order and values still count: another order of the variants is another request.
    for (const changed of [
      { ...body, variants: [...body.variants].reverse() },
      { ...body, name: 'Re-serialised retry ' },
      { ...body, target_id: String(body.target_id) },
    ]) {
      const res = await post<Schemas['HTTPValidationError']>(
        '/api/v1/experiments/',
        changed,
        'reserialised-1',
      );
      expect(res.status, JSON.stringify(changed)).toBe(422);
      expect(res.body.detail[0]!.loc).toEqual(['header', 'Idempotency-Key']);
    }

    const path = `/api/v1/channels/targets/${fx.targets.main}/sessions`;
    const routed = await post<Schemas['RoutedSession']>(path, '{"user_id":"spaced"}', 'spaced-1');
    const spaced = await post(path, '{\n  "user_id" : "spaced"\n}\n', 'spaced-1');
    expect(spaced.headers.get('idempotent-replayed')).toBe('true');
    expect(spaced.body).toEqual(routed.body);
  });

  it('answers 409 while the first request with the key is still running', async () => {
    const { keyId } = { keyId: acme.key.split('_')[1]! };
    const path = `/api/v1/channels/targets/${fx.targets.main}/sessions`;
    // Claim the key as a request in flight would have, then retry it.
    const hash = requestFingerprint('POST', path, canonicalJson({ user_id: 'slow' }));
    expect(await claimIdempotencyKey(api.db, keyId, 'flight-1', hash, TIMES)).toEqual({
      kind: 'claimed',
    });
    const res = await post<Schemas['ErrorResponse']>(path, { user_id: 'slow' }, 'flight-1');
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('still running');
  });

  it('routes one session for concurrent twins of a keyed request; the others replay it', async () => {
    const before = await sessionCount();
    const path = `/api/v1/channels/targets/${fx.targets.main}/sessions`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(path, { user_id: 'twin' }, 'twins-1')),
    );
    expect(answers.map((res) => res.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((res) => JSON.stringify(res.body))).size).toBe(1);
    expect(answers.filter((res) => res.headers.get('idempotent-replayed') === 'true')).toHaveLength(
      9,
    );
    expect(await sessionCount()).toBe(before + 1);
  });

  it('lets exactly one of many concurrent claims of a key run', async () => {
    const claims = await Promise.all(
      Array.from({ length: 20 }, () => claimIdempotencyKey(api.db, 'key-c', 'race-1', 'h', TIMES)),
    );
    const kinds = claims.map((claim) => claim.kind);
    expect(kinds.filter((kind) => kind === 'claimed')).toHaveLength(1);
    expect(kinds.filter((kind) => kind === 'in_flight')).toHaveLength(19);
  });

  it('keeps keys apart per API key; a claim without an answer holds its key for the lease', async () => {
    const at = (iso: string) => new Date(`2026-01-01T${iso}Z`);
    const claim = (apiKeyId: string, when: string) =>
      claimIdempotencyKey(api.db, apiKeyId, 'k', 'h', TIMES, at(when));
    expect(await claim('key-a', '00:00:00')).toEqual({ kind: 'claimed' });
    expect(await claim('key-b', '00:00:00')).toEqual({ kind: 'claimed' });
    expect(await claim('key-a', '00:00:59')).toEqual({ kind: 'in_flight' });
    // The lease ran out: the first request died with its process, so a retry takes the key over.
    expect(await claim('key-a', '00:01:01')).toEqual({ kind: 'claimed' });
    expect(await claim('key-a', '00:01:30')).toEqual({ kind: 'in_flight' });
  });

  it('replays an answer for the retention and forgets it afterwards', async () => {
    const times = { retentionMs: 10_000, leaseMs: 1_000 };
    const at = (seconds: number) => new Date(Date.UTC(2026, 0, 2, 0, 0, seconds));
    expect(await claimIdempotencyKey(api.db, 'key-r', 'r', 'h', times, at(0))).toEqual({
      kind: 'claimed',
    });
    const write = { apiKeyId: 'key-r', key: 'r', requestHash: 'h', times, stored: false };
    expect(
      await storeIdempotentAnswer(api.db, { ...write, claimed: true }, 200, '{"ok":true}', at(1)),
    ).toBeNull();
    expect(await claimIdempotencyKey(api.db, 'key-r', 'r', 'h', times, at(9))).toEqual({
      kind: 'replay',
      status: 200,
      body: '{"ok":true}',
    });
    // Ten seconds after the answer was stored, the key is free again.
    expect(await claimIdempotencyKey(api.db, 'key-r', 'r', 'other', times, at(12))).toEqual({
      kind: 'claimed',
    });
  });

  it('sweeps expired rows oldest first, at most a batch at a time', async () => {
    const times = { retentionMs: 60_000, leaseMs: 1_000 };
    const base = Date.UTC(2026, 0, 3);
    // Other tests of this file left rows from earlier days: out of the way first.
    await sweepExpiredIdempotencyKeys(api.db, 0, 1000, new Date(base));
    for (let i = 0; i < 5; i += 1) {
      await claimIdempotencyKey(api.db, 'key-s', `s${i}`, 'h', times, new Date(base + i * 1000));
    }
    const now = new Date(base + 63_500); // s0..s3 are older than the retention, s4 is not
    expect(await sweepExpiredIdempotencyKeys(api.db, times.retentionMs, 3, now)).toBe(3);
    expect(await sweepExpiredIdempotencyKeys(api.db, times.retentionMs, 3, now)).toBe(1);
    expect(await sweepExpiredIdempotencyKeys(api.db, times.retentionMs, 3, now)).toBe(0);
    expect(
      await claimIdempotencyKey(api.db, 'key-s', 's4', 'h', times, new Date(base + 4_500)),
    ).toEqual({ kind: 'in_flight' });
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

async function storedKeysOf(apiKey: string): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(
    api.db,
    sql`SELECT count(*) AS n FROM ${idempotencyKeys} WHERE ${idempotencyKeys.apiKeyId} = ${parseApiKey(apiKey)!.keyId}`,
  );
  return Number(row!.n);
}

function expectKeyReusedRefusal(res: { status: number; body: unknown }) {
  expect(res.status).toBe(422);
  expect((res.body as Schemas['HTTPValidationError']).detail[0]).toMatchObject({
    loc: ['header', 'Idempotency-Key'],
    type: 'value_error',
  });
}

describe('Idempotency-Key across operations and refusals', () => {
  const routePath = (targetId: number) => `/api/v1/channels/targets/${targetId}/sessions`;

  it('never replays a routed session to the same key on another target', async () => {
    const first = await post(routePath(fx.targets.main), { user_id: 'x' }, 'cross-target');
    expect(first.status).toBe(200);
    const other = await post(routePath(424242), { user_id: 'x' }, 'cross-target');
    expectKeyReusedRefusal(other);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
  });

  it('refuses a key used for an experiment write on session routing, routing nothing', async () => {
    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
      name: 'Cross-operation key',
    });
    expect((await post('/api/v1/experiments/', body, 'cross-op')).status).toBe(200);
    const before = await sessionCount();
    expectKeyReusedRefusal(await post(routePath(fx.targets.main), { user_id: 'y' }, 'cross-op'));
    expect(await sessionCount()).toBe(before);
  });

  it("routes the rest of a batch when one session's key is held: only that one is refused", async () => {
    expect((await post(routePath(fx.targets.main), { user_id: 'held' }, 'held-key')).status).toBe(
      200,
    );
    const before = await sessionCount();
    // Sent together, so that on PostgreSQL they are routed in one batch.
    const [unkeyed, fresh, held] = await Promise.all([
      api.request('POST', routePath(fx.targets.main), {
        key: acme.key,
        body: { user_id: 'no key' },
      }),
      post(routePath(fx.targets.main), { user_id: 'fresh' }, 'fresh-key'),
      post(routePath(fx.targets.main), { user_id: 'another caller' }, 'held-key'),
    ]);
    expect([unkeyed.status, fresh.status]).toEqual([200, 200]);
    expectKeyReusedRefusal(held);
    expect(await sessionCount()).toBe(before + 2);
    const retried = await post(routePath(fx.targets.main), { user_id: 'fresh' }, 'fresh-key');
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body).toEqual(fresh.body);
  });

  it('refuses a key used for session routing on an experiment write', async () => {
    expect((await post(routePath(fx.targets.main), {}, 'cross-op-2')).status).toBe(200);
    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]);
    expectKeyReusedRefusal(await post('/api/v1/experiments/', body, 'cross-op-2'));
  });

  it('checks the permission before the body, and stores no 401 or 403', async () => {
    const parked = await createKey(api.db, acme.organizationId, []);
    const reader = await createKey(api.db, acme.organizationId, ['CHANNELS_READ']);
    for (const [key, i] of [parked, reader].flatMap((k) => [0, 1].map((n) => [k, n] as const))) {
      const res = await api.request<Schemas['ErrorResponse']>('POST', '/api/v1/experiments/', {
        key,
        body: '{bad',
        headers: { 'Idempotency-Key': `refused-${i}` },
      });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('PERMISSION_DENIED');
    }
    const unknown = await api.request('POST', routePath(fx.targets.main), {
      key: 'agl_nosuchkey_secret',
      body: {},
      headers: { 'Idempotency-Key': 'refused-401' },
    });
    expect(unknown.status).toBe(401);
    expect(await storedKeysOf(parked)).toBe(0);
    expect(await storedKeysOf(reader)).toBe(0);
  });

  it('stores nothing for a request refused by validation, so the corrected retry runs', async () => {
    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
      name: 'Corrected after a 422',
    });
    const invalid = await post('/api/v1/experiments/', { ...body, name: '' }, 'fix-then-retry');
    expect(invalid.status).toBe(422);
    const corrected = await post<Schemas['Experiment']>(
      '/api/v1/experiments/',
      body,
      'fix-then-retry',
    );
    expect(corrected.status).toBe(200);
    expect(corrected.body.name).toBe('Corrected after a 422');

    const badRouting = await post(routePath(fx.targets.main), { user_id: 7 }, 'fix-route');
    expect(badRouting.status).toBe(422);
    expect((await post(routePath(fx.targets.main), { user_id: '7' }, 'fix-route')).status).toBe(
      200,
    );
  });
});
