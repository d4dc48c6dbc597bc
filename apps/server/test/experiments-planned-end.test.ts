// Planned ends: an experiment stops by itself at its end_at or after max_sessions sessions,
// frees its target, and the history shows the system ended it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { sweepPlannedEnds } from '../src/use-cases/experiment-changes.js';
import { experiments } from '../src/db/schema/sqlite.js';
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

beforeAll(async () => {
  ({ api, acme, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

/** `T` is the body expected, as for `TestApi.request`. */
const call = <T>(method: string, path: string, body?: unknown) =>
  api.request<T>(method, `/api/v1/${path}`, { key: acme.key, body });

const route = (targetId: number, userId: string) =>
  call<Schemas['RoutedSession']>('POST', `channels/targets/${targetId}/sessions`, {
    user_id: userId,
  });

const get = (id: number) => call<Schemas['Experiment']>('GET', `experiments/${id}`);

const newestChange = async (id: number) =>
  (await call<Schemas['ExperimentChangeListResponse']>('GET', `experiments/${id}/history?limit=1`))
    .body.items[0]!;

async function running(targetId: number, overrides: Record<string, unknown> = {}) {
  const created = await call<Schemas['Experiment']>(
    'POST',
    'experiments/',
    experimentBody(targetId, [fx.agents.unpinned, fx.agents.alsoPinned], overrides),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  expect((await call('POST', `experiments/${created.body.id}/start`)).status).toBe(200);
  return created.body;
}

/** What the database stores for the experiment, whatever reads show. */
async function stored(id: number) {
  const [row] = await queryTestDb<{ status: string; stoppedAt: string | null }>(
    api.db,
    sql`SELECT status AS "status", stopped_at AS "stoppedAt" FROM ${experiments} WHERE id = ${id}`,
  );
  return row!;
}

/** Moves the experiment's end_at into the past, as if time had passed. */
async function endAtPassed(id: number, endAt: string) {
  await queryTestDb(api.db, sql`UPDATE ${experiments} SET end_at = ${endAt} WHERE id = ${id}`);
}

describe('planned end fields', () => {
  it('are written on create and update, shown on the record, and in the history', async () => {
    const created = await call<Schemas['Experiment']>(
      'POST',
      'experiments/',
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
        end_at: '2099-01-02T03:04:05+02:00',
        max_sessions: 10_000,
      }),
    );
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      end_at: '2099-01-02T01:04:05.000Z',
      max_sessions: 10_000,
      ended_reason: null,
    });
    const id = created.body.id;
    const updated = await call<Schemas['Experiment']>(
      'PUT',
      `experiments/${id}`,
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
        max_sessions: null,
      }),
    );
    expect(updated.body).toMatchObject({ end_at: null, max_sessions: null });
    expect((await newestChange(id)).changes).toEqual({
      end_at: { from: '2099-01-02T01:04:05.000Z', to: null },
      max_sessions: { from: 10_000, to: null },
    });
    await call('DELETE', `experiments/${id}`);
  });

  it('refuses a max_sessions out of range and an end_at that is not a date-time', async () => {
    for (const [field, value] of [
      ['max_sessions', 0],
      ['max_sessions', 1_000_000_001],
      ['end_at', 'Friday night'],
    ] as const) {
      const res = await call<Schemas['HTTPValidationError']>(
        'POST',
        'experiments/',
        experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
          [field]: value,
        }),
      );
      expect(res.status, `${field} ${value}`).toBe(422);
      expect(res.body.detail[0]!.loc).toEqual(['body', field]);
    }
  });

  it('refuses to start a draft whose end_at has passed, and writes nothing', async () => {
    const created = await call<Schemas['Experiment']>(
      'POST',
      'experiments/',
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
        end_at: '2020-01-01T00:00:00Z',
      }),
    );
    const res = await call<Schemas['ErrorResponse']>(
      'POST',
      `experiments/${created.body.id}/start`,
    );
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('end_at (2020-01-01T00:00:00.000Z) that has passed');
    expect((await get(created.body.id)).body.status).toBe('draft');
    expect((await newestChange(created.body.id)).action).toBe('created');
    await call('DELETE', `experiments/${created.body.id}`);
  });
});

describe('max_sessions', () => {
  it('routes exactly that many sessions, then stops with the last one', async () => {
    const experiment = await running(fx.targets.second, { max_sessions: 5 });
    const answers = [];
    for (let i = 0; i < 8; i += 1) answers.push((await route(fx.targets.second, `u-${i}`)).body);
    expect(answers.map((a) => a.experiment_id)).toEqual([
      ...Array<number>(5).fill(experiment.id),
      ...Array<null>(3).fill(null),
    ]);
    expect(answers.slice(5).every((a) => a.agent_id === fx.agents.pinned)).toBe(true);
    const record = (await get(experiment.id)).body;
    expect(record).toMatchObject({ status: 'stopped', ended_reason: 'max_sessions' });
    expect(record.stopped_at).toBe(answers[4]!.created_at);
    const results = await call<Schemas['ExperimentResults']>(
      'GET',
      `experiments/${experiment.id}/results`,
    );
    expect(results.body.total_sessions).toBe(5);
    const ended = await newestChange(experiment.id);
    expect(ended).toMatchObject({
      action: 'ended',
      actor: { type: 'system' },
      request_id: null,
      changes: { status: { from: 'running', to: 'stopped' } },
    });
  });
});

describe('end_at', () => {
  it('reads as stopped at end_at, routes nothing more, and frees the target', async () => {
    const experiment = await running(fx.targets.second, { end_at: '2099-01-01T00:00:00Z' });
    expect((await route(fx.targets.second, 'before')).body.experiment_id).toBe(experiment.id);
    const endAt = new Date(Date.now() - 60_000).toISOString();
    await endAtPassed(experiment.id, endAt);

    // Stored as running still, but every read shows the end.
    expect((await stored(experiment.id)).status).toBe('running');
    expect((await get(experiment.id)).body).toMatchObject({
      status: 'stopped',
      stopped_at: endAt,
      ended_reason: 'end_at',
    });
    const preview = await call<Schemas['Assignment']>(
      'GET',
      `channels/targets/${fx.targets.second}/assignment?user_id=after`,
    );
    expect(preview.body).toMatchObject({ experiment_id: null, agent_id: fx.agents.pinned });

    // Another experiment starts on the target; the first one's end is stored with it.
    const next = await running(fx.targets.second);
    expect(await stored(experiment.id)).toEqual({ status: 'stopped', stoppedAt: endAt });
    expect(await newestChange(experiment.id)).toMatchObject({
      action: 'ended',
      actor: { type: 'system' },
    });
    expect((await route(fx.targets.second, 'after')).body.experiment_id).toBe(next.id);
    await call('POST', `experiments/${next.id}/stop`);
  });

  it('is stored by the first session routed after it', async () => {
    const experiment = await running(fx.targets.second, { end_at: '2099-01-01T00:00:00Z' });
    const endAt = new Date(Date.now() - 1_000).toISOString();
    await endAtPassed(experiment.id, endAt);
    const res = await route(fx.targets.second, 'late');
    expect(res.body).toMatchObject({ experiment_id: null, agent_id: fx.agents.pinned });
    expect(await stored(experiment.id)).toEqual({ status: 'stopped', stoppedAt: endAt });
  });

  it('is stored by the sweep without any traffic', async () => {
    const experiment = await running(fx.targets.second, { end_at: '2099-01-01T00:00:00Z' });
    const endAt = new Date(Date.now() - 1_000).toISOString();
    await endAtPassed(experiment.id, endAt);
    expect(await sweepPlannedEnds(api.db)).toBe(1);
    expect(await stored(experiment.id)).toEqual({ status: 'stopped', stoppedAt: endAt });
    expect((await newestChange(experiment.id)).action).toBe('ended');
    expect(await sweepPlannedEnds(api.db)).toBe(0);
  });
});
