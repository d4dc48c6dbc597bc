// The assignment preview: what routing would answer a user now, without routing anything.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { events, sessions } from '../src/db/schema/sqlite.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;
let globexFx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, fx, globexFx } = await createRoutingTestbed());
});

afterAll(() => api.close());

/** `T` is the body expected: the assignment, or the error of a refusal. */
const preview = <T = Schemas['Assignment']>(targetId: number, userId?: string) =>
  api.request<T>(
    'GET',
    `/api/v1/channels/targets/${targetId}/assignment` +
      (userId === undefined ? '' : `?user_id=${encodeURIComponent(userId)}`),
    { key: acme.key },
  );

const route = (targetId: number, userId: string) =>
  api.request<Schemas['RoutedSession']>('POST', `/api/v1/channels/targets/${targetId}/sessions`, {
    key: acme.key,
    body: { user_id: userId },
  });

/** What the previews must not change: the results and every stored session and event. */
async function footprint(experimentId: number) {
  const results = await api.request<Schemas['ExperimentResults']>(
    'GET',
    `/api/v1/experiments/${experimentId}/results`,
    { key: acme.key },
  );
  const [counts] = await queryTestDb<{ sessions: number; events: number }>(
    api.db,
    sql`SELECT (SELECT count(*) FROM ${sessions}) AS sessions, (SELECT count(*) FROM ${events}) AS events`,
  );
  return {
    results: results.body,
    sessions: Number(counts!.sessions),
    events: Number(counts!.events),
  };
}

/** Runs `work` for each of `items`, `wave` at a time, as concurrent requests arrive. */
async function inWaves<T, R>(items: T[], wave: number, work: (item: T) => Promise<R>) {
  const answers: R[] = [];
  for (let first = 0; first < items.length; first += wave) {
    answers.push(...(await Promise.all(items.slice(first, first + wave).map(work))));
  }
  return answers;
}

describe('assignment preview', () => {
  it("answers the target's own agent while no experiment runs", async () => {
    const res = await preview(fx.targets.main, 'caller-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      target_id: fx.targets.main,
      agent_id: fx.agents.pinned,
      experiment_id: null,
      variant_id: null,
    });
  });

  it('equals the routing answer that follows for 1,000 users, and changes nothing', async () => {
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.second, [fx.agents.unpinned, fx.agents.alsoPinned]),
    });
    const experiment = created.body;
    const start = await api.request('POST', `/api/v1/experiments/${experiment.id}/start`, {
      key: acme.key,
    });
    expect(start.status).toBe(200);
    const users = Array.from({ length: 1_000 }, (_, i) => `+1415555${String(i).padStart(4, '0')}`);

    const before = await footprint(experiment.id);
    const previews = await inWaves(users, 20, (user) => preview(fx.targets.second, user));
    expect(await footprint(experiment.id)).toEqual(before);

    const routed = await inWaves(users, 20, (user) => route(fx.targets.second, user));
    routed.forEach((res, i) => {
      expect(previews[i]!.status).toBe(200);
      expect(res.status).toBe(200);
      const { target_id, agent_id, experiment_id, variant_id } = res.body;
      expect(previews[i]!.body, users[i]).toEqual({
        target_id,
        agent_id,
        experiment_id,
        variant_id,
      });
    });
    // Both variants were previewed (and routed): the comparison covered each side of the split.
    expect(new Set(previews.map((p) => p.body.variant_id))).toEqual(
      new Set(experiment.variants.map((v) => v.id)),
    );
    const after = await footprint(experiment.id);
    expect(after.results.total_sessions).toBe(users.length);
    expect(after.sessions).toBe(before.sessions + users.length);

    // Once stopped, the preview answers the target's own agent, as routing does.
    await api.request('POST', `/api/v1/experiments/${experiment.id}/stop`, { key: acme.key });
    expect((await preview(fx.targets.second, users[0])).body).toEqual({
      target_id: fx.targets.second,
      agent_id: fx.agents.pinned,
      experiment_id: null,
      variant_id: null,
    });
  }, 180_000);

  it('is a 409 on a target with no agent and no experiment, as routing is', async () => {
    const res = await preview<Schemas['ErrorResponse']>(fx.targets.orphan, 'caller-1');
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('has no agent of its own and no running experiment');
  });

  it("is a 404 for an unknown target and another organization's target", async () => {
    for (const target of [999_999, globexFx.targets.main]) {
      const res = await preview<Schemas['ErrorResponse']>(target, 'caller-1');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
  });

  it('is a 422 at user_id without a user id, or with an empty one', async () => {
    for (const userId of [undefined, '']) {
      const res = await preview<Schemas['HTTPValidationError']>(fx.targets.main, userId);
      expect(res.status).toBe(422);
      expect(res.body.detail[0]!.loc).toEqual(['query', 'user_id']);
    }
  });
});
