// Session routing: the split of a target's live traffic that experiments exist for.

import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { sql } from 'drizzle-orm';
import type { RoutedSessionRecord } from '../src/db/repositories/sessions.js';
import { routeSession } from '../src/use-cases/routing/session-routing.js';
import { events, sessions } from '../src/db/schema/sqlite.js';
import { RecordNotFoundError, StateConflictError } from '../src/domain/errors.js';
import { pickVariant, stickyBucket } from '../src/domain/variant-picking.js';
import { createKey, type Schemas, type Tenant, type TestApi } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { onPostgres, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;
let globex: Tenant;
let globexFx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, globex, fx, globexFx } = await createRoutingTestbed());
});

afterAll(() => api.close());

/** `T` is the body expected: the routed session, or the error of a refusal. */
const route = <T = Schemas['RoutedSession']>(targetId: number, body?: unknown, key = acme.key) =>
  api.request<T>('POST', `/api/v1/channels/targets/${targetId}/sessions`, { key, body });

async function runningExperiment(targetId: number, agentIds: [number, number]) {
  const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
    key: acme.key,
    body: experimentBody(targetId, agentIds),
  });
  expect(created.status).toBe(200);
  expect(
    (await api.request('POST', `/api/v1/experiments/${created.body.id}/start`, { key: acme.key }))
      .status,
  ).toBe(200);
  return created.body;
}

const stop = (id: number) =>
  api.request('POST', `/api/v1/experiments/${id}/stop`, { key: acme.key });

describe('variant picking', () => {
  it('lays the 100 buckets out by weight in variant order', () => {
    const variants = [
      { id: 1, weight: 70 },
      { id: 2, weight: 30 },
    ];
    expect(pickVariant(variants, 1, null, () => 0).id).toBe(1);
    expect(pickVariant(variants, 1, null, () => 0.699).id).toBe(1);
    expect(pickVariant(variants, 1, null, () => 0.7).id).toBe(2);
    expect(pickVariant(variants, 1, null, () => 0.9999).id).toBe(2);
  });

  it('puts a user in the same bucket every time, and in different buckets per experiment', () => {
    expect(stickyBucket(5, 'alice')).toBe(stickyBucket(5, 'alice'));
    const buckets = new Set(
      Array.from({ length: 20 }, (_, experiment) => stickyBucket(experiment, 'alice')),
    );
    expect(buckets.size).toBeGreaterThan(5);
  });
});

describe('routing without an experiment', () => {
  it("sends the session to the target's own agent and logs a session-started event", async () => {
    const res = await route(fx.targets.main, {
      user_id: '+14155550100',
      conversation_id: 'conv-1',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      target_id: fx.targets.main,
      agent_id: fx.agents.pinned,
      experiment_id: null,
      variant_id: null,
    });
    const [event] = await queryTestDb<Record<string, unknown>>(
      api.db,
      sql`SELECT timestamp, source, category, type, user_id, conversation_id, attributes
        FROM ${events}
        WHERE ${events.organizationId} = ${acme.organizationId}
          AND ${events.sessionId} = ${res.body.session_id}`,
    );
    // SQLite returns the JSON column as its text, PostgreSQL as a parsed jsonb value.
    const attributes: unknown =
      typeof event!.attributes === 'string' ? JSON.parse(event!.attributes) : event!.attributes;
    expect({ ...event, attributes }).toMatchObject({
      timestamp: res.body.created_at,
      source: 'router',
      category: 'session',
      type: 'session-started',
      user_id: '+14155550100',
      conversation_id: 'conv-1',
      attributes: {
        target_id: fx.targets.main,
        agent_id: fx.agents.pinned,
        experiment_id: null,
        variant_id: null,
      },
    });
  });

  it('accepts a request without a body', async () => {
    const res = await api.request('POST', `/api/v1/channels/targets/${fx.targets.main}/sessions`, {
      key: acme.key,
    });
    expect(res.status).toBe(200);
  });

  it('answers 409 for a target with no agent and no experiment', async () => {
    const res = await route<Schemas['ErrorResponse']>(fx.targets.orphan, {});
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('no agent of its own and no running experiment');
  });

  it("answers 404 for an unknown or another organization's target", async () => {
    expect((await route(999_999, {})).status).toBe(404);
    // Past the spec's 32-bit ids (and PostgreSQL's integer columns): the path is refused.
    expect((await route(2 ** 31, {})).status).toBe(422);
    expect((await route(globexFx.targets.main, {})).status).toBe(404);
  });

  it('validates the body and the path', async () => {
    const long = await route<Schemas['HTTPValidationError']>(fx.targets.main, {
      user_id: 'x'.repeat(257),
    });
    expect(long.status).toBe(422);
    expect(long.body.detail[0]?.loc).toEqual(['body', 'user_id']);
    const badPath = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      '/api/v1/channels/targets/abc/sessions',
      { key: acme.key, body: {} },
    );
    expect(badPath.status).toBe(422);
    expect(badPath.body.detail[0]?.loc).toEqual(['path', 'target_id']);
  });

  it('needs SESSIONS_WRITE', async () => {
    const key = await createKey(api.db, acme.organizationId, ['CHANNELS_WRITE', 'CHANNELS_READ']);
    const res = await route<Schemas['ErrorResponse']>(fx.targets.main, {}, key);
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('SESSIONS_WRITE');
  });
});

describe('sessions routed at the same moment', () => {
  // Both backends commit them together (one transaction); each still gets its own answer.
  const routeNow = (targetId: number, userId: string | null = null) =>
    routeSession(api.db, acme.organizationId, targetId, { userId, conversationId: null });

  it('answers each on its own: stored, unknown target, target without an agent', async () => {
    const results = await Promise.allSettled([
      routeNow(fx.targets.main),
      routeNow(999_999),
      routeNow(fx.targets.orphan),
      routeNow(fx.targets.second),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(RecordNotFoundError);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(StateConflictError);
    const stored = await queryTestDb<{ id: string }>(
      api.db,
      sql`SELECT ${sessions.id} AS id FROM ${sessions} WHERE ${sessions.id} IN (${sql.join(
        results.flatMap((r) => (r.status === 'fulfilled' ? [sql`${r.value.sessionId}`] : [])),
        sql`, `,
      )})`,
    );
    expect(stored).toHaveLength(2);
  });

  // The HTTP layer refuses U+0000 on both backends; a caller of the repository that did not
  // would find only PostgreSQL refusing it, which shows the batch's fallback to one at a time.
  it.runIf(onPostgres)('fails only the session the database refuses to store', async () => {
    const results = await Promise.allSettled([
      routeNow(fx.targets.main, 'fine'),
      routeNow(fx.targets.main, 'no\u0000good'),
      routeNow(fx.targets.main, 'also fine'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  // One organization's sessions that arrive, turn after turn of the event loop, while its batch is
  // in flight go together in its next batch; another organization's batch runs beside them.
  // PostgreSQL's xmin names the transaction that wrote a row: it counts the batches.
  it.runIf(onPostgres)("routes an organization's sessions one batch at a time", async () => {
    const started: Array<Promise<RoutedSessionRecord>> = [];
    const globexSession = routeSession(api.db, globex.organizationId, globexFx.targets.main, {
      userId: 'beside',
      conversationId: null,
    });
    for (let index = 0; index < 20; index += 1) {
      started.push(routeNow(fx.targets.main, `lane ${index}`));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const routed = await Promise.all(started);
    const ids = routed.map(({ sessionId }) => sql`${sessionId}`);
    const [acmeBatches] = await queryTestDb<{ n: number }>(
      api.db,
      sql`SELECT count(DISTINCT xmin::text)::int AS n FROM ${sessions}
        WHERE ${sessions.id} IN (${sql.join(ids, sql`, `)})`,
    );
    // The first session's batch, then the others together (a third if the first ended early).
    expect(acmeBatches!.n).toBeLessThanOrEqual(3);
    const [sharedWithGlobex] = await queryTestDb<{ n: number }>(
      api.db,
      sql`SELECT count(*)::int AS n FROM ${sessions}
        WHERE ${sessions.id} IN (${sql.join(ids, sql`, `)})
          AND xmin::text = (SELECT xmin::text FROM ${sessions}
                            WHERE ${sessions.id} = ${(await globexSession).sessionId})`,
    );
    expect(sharedWithGlobex!.n).toBe(0);
  });
});

describe('routing with a running 70/30 experiment', () => {
  it('splits 5,000 sessions within the 99.9% binomial interval and counts them exactly', async () => {
    const experiment = await runningExperiment(fx.targets.second, [
      fx.agents.pinned,
      fx.agents.alsoPinned,
    ]);
    const [control, candidate] = experiment.variants as [Schemas['Variant'], Schemas['Variant']];
    const routed = new Map<number | null, number>();
    const total = 5_000;
    // In waves of concurrent requests, as live traffic arrives (each wave is committed together).
    const wave = 50;
    for (let first = 0; first < total; first += wave) {
      const answers = await Promise.all(
        Array.from({ length: wave }, (_, i) =>
          route(fx.targets.second, { user_id: `user-${first + i}` }),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.body.experiment_id).toBe(experiment.id);
        const variant = res.body.variant_id;
        expect(res.body.agent_id).toBe(
          variant === control.id ? control.agent_id : candidate.agent_id,
        );
        routed.set(variant, (routed.get(variant) ?? 0) + 1);
      }
    }
    // Binomial(n = 5,000, p = 0.7): mean 3,500, sd = sqrt(n p (1 - p)) = 32.4; the two-sided
    // 99.9% interval is mean +- 3.29 sd = [3,394, 3,606].
    const controlCount = routed.get(control.id) ?? 0;
    expect(controlCount).toBeGreaterThanOrEqual(3_394);
    expect(controlCount).toBeLessThanOrEqual(3_606);
    expect(controlCount + (routed.get(candidate.id) ?? 0)).toBe(total);

    const results = await api.request<Schemas['ExperimentResults']>(
      'GET',
      `/api/v1/experiments/${experiment.id}/results`,
      { key: acme.key },
    );
    const candidateCount = routed.get(candidate.id)!;
    expect(results.body.total_sessions).toBe(total);
    expect(results.body.variants).toEqual([
      {
        variant_id: control.id,
        name: 'control',
        weight: 70,
        is_control: true,
        session_count: controlCount,
        share: controlCount / total,
      },
      {
        variant_id: candidate.id,
        name: 'candidate',
        weight: 30,
        is_control: false,
        session_count: candidateCount,
        share: candidateCount / total,
      },
    ]);
    await stop(experiment.id);
  }, 180_000);

  it('gives the same user the same variant every time', async () => {
    const experiment = await runningExperiment(fx.targets.second, [
      fx.agents.pinned,
      fx.agents.alsoPinned,
    ]);
    for (const user of ['alice', 'bob', '+14155550100']) {
      const picks = new Set<number | null>();
      for (let i = 0; i < 25; i += 1)
        picks.add((await route(fx.targets.second, { user_id: user })).body.variant_id);
      expect(picks.size).toBe(1);
    }
    await stop(experiment.id);
  });

  it('splits anonymous sessions by weight too', async () => {
    const experiment = await runningExperiment(fx.targets.second, [
      fx.agents.pinned,
      fx.agents.alsoPinned,
    ]);
    const picks = new Set<number | null>();
    for (let i = 0; i < 200; i += 1)
      picks.add((await route(fx.targets.second, {})).body.variant_id);
    // P(200 anonymous sessions all land on one side) < 1e-30.
    expect(picks.size).toBe(2);
    await stop(experiment.id);
  });

  it("sends every session after a stop to the target's own agent, and keeps the counts", async () => {
    const experiment = await runningExperiment(fx.targets.second, [
      fx.agents.unpinned,
      fx.agents.alsoPinned,
    ]);
    let during = 0;
    for (let i = 0; i < 100; i += 1) {
      const res = await route(fx.targets.second, { user_id: `u-${i}` });
      expect(res.body.experiment_id).toBe(experiment.id);
      during += 1;
    }
    expect((await stop(experiment.id)).status).toBe(200);
    for (let i = 0; i < 100; i += 1) {
      const res = await route(fx.targets.second, { user_id: `u-${i}` });
      expect(res.body).toMatchObject({
        experiment_id: null,
        variant_id: null,
        agent_id: fx.agents.pinned,
      });
    }
    const results = await api.request<Schemas['ExperimentResults']>(
      'GET',
      `/api/v1/experiments/${experiment.id}/results`,
      { key: acme.key },
    );
    expect(results.body.status).toBe('stopped');
    expect(results.body.variants.reduce((sum, v) => sum + v.session_count, 0)).toBe(during);
    expect(results.body.total_sessions).toBe(during);
  });
});
