// Experiments: every transition of the state table (docs/decisions.md section 6), legal and
// illegal, then results and the list, with each response checked against the spec by the harness.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { sessions } from '../src/db/schema/sqlite.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { expectProblem, useExperimentsTestbed } from './support/experiments-testbed.js';
import { anyString, stringMatching } from './support/matchers.js';
import { experimentBody, type RoutingFixture } from './support/routing-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let globexFx: RoutingFixture;

const { call, createDraft, createRunning, createStopped } = useExperimentsTestbed((testbed) => {
  ({ api, acme, globex, fx, globexFx } = testbed);
});

describe('update', () => {
  it('replaces name, description and the whole variant set of a draft, keeping the target', async () => {
    const draft = await createDraft();
    const res = await call<Schemas['Experiment']>('PUT', String(draft.id), {
      name: 'Renamed',
      description: null,
      variants: [
        { name: 'a', weight: 40, agent_id: fx.agents.unpinned },
        { name: 'b', weight: 35, is_control: true, agent_id: fx.agents.pinned },
        { name: 'c', weight: 25, agent_id: fx.agents.alsoPinned },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      description: null,
      status: 'draft',
      target_id: fx.targets.second,
    });
    expect(res.body.variants.map((v) => v.name)).toEqual(['a', 'b', 'c']);
    expect(res.body.variants.map((v) => v.id)).not.toContain(draft.variants[0]!.id);
    expect(res.body.updated_at >= res.body.created_at).toBe(true);
  });

  it('accepts the stored target_id and rejects another one', async () => {
    const draft = await createDraft();
    const same = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]);
    expect((await call('PUT', String(draft.id), same)).status).toBe(200);
    const other = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]);
    expectProblem(
      await call('PUT', String(draft.id), other),
      ['body', 'target_id'],
      /cannot change/,
    );
  });

  it('requires variants', async () => {
    const draft = await createDraft();
    expectProblem(
      await call('PUT', String(draft.id), { name: 'x' }),
      ['body', 'variants'],
      /required/,
      'missing',
    );
  });

  it('applies the variant rules', async () => {
    const draft = await createDraft();
    const body = experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]);
    body.variants[0]!.weight = 80;
    expectProblem(await call('PUT', String(draft.id), body), ['body', 'variants'], /total 110/);
  });

  it.each([
    ['running', createRunning],
    ['stopped', createStopped],
  ])('refuses a %s experiment with 409', async (state, make) => {
    const experiment = await make(fx.targets.second);
    const res = await call<Schemas['ErrorResponse']>(
      'PUT',
      String(experiment.id),
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    );
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'CONFLICT' });
    expect(res.body.detail).toContain(`is ${state}; only draft experiments can be updated`);
    if (state === 'running') await call('POST', `${experiment.id}/stop`);
  });
});

describe('start, stop and the one-running-per-target rule', () => {
  it('starts a draft, with warnings that do not block', async () => {
    const res = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.main, [fx.agents.unpinned, fx.agents.flawed]),
    );
    const started = await call<Schemas['ExperimentStartResponse']>('POST', `${res.body.id}/start`);
    expect(started.status).toBe(200);
    expect(started.body.experiment).toMatchObject({
      status: 'running',
      started_at: anyString(),
      stopped_at: null,
    });
    expect(started.body.warnings).toEqual([
      stringMatching(/^Variant "control": agent "Unpinned" \(\d+\) does not pin a prompt version/),
      stringMatching(
        /^Variant "candidate": the prompt of agent "Flawed" \(\d+\) has error-level validation issues \(context-empty\)/,
      ),
    ]);
    await call('POST', `${res.body.id}/stop`);
  });

  it('gives no warnings when every agent pins a version of a sound prompt', async () => {
    const running = await createRunning(fx.targets.second);
    const again = await call<Schemas['Experiment']>('GET', String(running.id));
    expect(again.body.status).toBe('running');
    const stopped = await call<Schemas['Experiment']>('POST', `${running.id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: 'stopped', stopped_at: anyString() });
  });

  it('refuses a second running experiment on the same target and names the first', async () => {
    const first = await createRunning(fx.targets.second);
    const second = await createDraft({ name: 'Second' });
    const res = await call<Schemas['ErrorResponse']>('POST', `${second.id}/start`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain(
      `Experiment ${first.id} ("Shorter answers") is already running on channel target ${fx.targets.second}`,
    );
    // A different target is free.
    const elsewhere = await createDraft({ name: 'Elsewhere' }, fx.targets.main);
    expect((await call('POST', `${elsewhere.id}/start`)).status).toBe(200);
    await call('POST', `${first.id}/stop`);
    await call('POST', `${elsewhere.id}/stop`);
    // With the first stopped, the second can start.
    expect((await call('POST', `${second.id}/start`)).status).toBe(200);
    await call('POST', `${second.id}/stop`);
  });

  it.each([
    ['running', createRunning, /already running/],
    ['stopped', createStopped, /cannot be restarted/],
  ])('refuses to start a %s experiment', async (_, make, message) => {
    const experiment = await make(fx.targets.second);
    const res = await call<Schemas['ErrorResponse']>('POST', `${experiment.id}/start`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(message);
    await call('POST', `${experiment.id}/stop`);
  });

  it.each([
    ['draft', () => createDraft()],
    ['stopped', () => createStopped(fx.targets.second)],
  ])('refuses to stop a %s experiment', async (state, make) => {
    const experiment = await make();
    const res = await call<Schemas['ErrorResponse']>('POST', `${experiment.id}/stop`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain(`is ${state}; only a running experiment can be stopped`);
  });
});

describe('delete', () => {
  it('deletes a draft', async () => {
    const draft = await createDraft();
    const res = await call<Schemas['ExperimentDeleteResponse']>('DELETE', String(draft.id));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: draft.id, deleted: true });
    expect((await call('GET', String(draft.id))).status).toBe(404);
  });

  it('refuses a running experiment until it is stopped', async () => {
    const running = await createRunning(fx.targets.second);
    const res = await call<Schemas['ErrorResponse']>('DELETE', String(running.id));
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain('stop it');
    await call('POST', `${running.id}/stop`);
    expect((await call('DELETE', String(running.id))).status).toBe(200);
  });

  it('keeps the sessions of a deleted stopped experiment', async () => {
    const running = await createRunning(fx.targets.second);
    for (let i = 0; i < 3; i += 1) {
      expect(
        (
          await api.request('POST', `/api/v1/channels/targets/${fx.targets.second}/sessions`, {
            key: acme.key,
            body: {},
          })
        ).status,
      ).toBe(200);
    }
    await call('POST', `${running.id}/stop`);
    expect((await call('DELETE', String(running.id))).status).toBe(200);
    const [row] = await queryTestDb<{ n: number }>(
      api.db,
      sql`SELECT count(*) AS n FROM ${sessions} WHERE ${sessions.experimentId} = ${running.id}`,
    );
    expect(row!.n).toBe(3);
  });
});

describe('results', () => {
  it('are zeros in draft, in variant order', async () => {
    const draft = await createDraft();
    const res = await call<Schemas['ExperimentResults']>('GET', `${draft.id}/results`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      experiment_id: draft.id,
      status: 'draft',
      total_sessions: 0,
      variants: [
        {
          variant_id: draft.variants[0]!.id,
          name: 'control',
          weight: 70,
          is_control: true,
          session_count: 0,
          share: 0,
        },
        {
          variant_id: draft.variants[1]!.id,
          name: 'candidate',
          weight: 30,
          is_control: false,
          session_count: 0,
          share: 0,
        },
      ],
    });
  });
});

describe('list', () => {
  it('searches, orders, projects and stays inside the organization', async () => {
    const named = await createDraft({ name: 'Needle in the haystack' });
    const byName = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?search_fields=name&search_field_values=NEEDLE',
    );
    expect(byName.body.items.map((e) => e.id)).toEqual([named.id]);
    // Two substring searches: the rows that match both.
    const twoSubstrings = (status: string) =>
      call<Schemas['ExperimentListResponse']>(
        'GET',
        `?search_fields=status&search_fields=name&search_field_values=${status}&search_field_values=haystack`,
      );
    expect((await twoSubstrings('DRAFT')).body.items.map((e) => e.id)).toEqual([named.id]);
    expect((await twoSubstrings('stop')).body.total_count).toBe(0);
    const exact = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?search_fields=name_exact&search_field_values=needle%20in%20the%20haystack',
    );
    expect(exact.body.total_count).toBe(0);

    const byAgent = await call<Schemas['ExperimentListResponse']>(
      'GET',
      `?search_fields=agent_id&search_field_values=${fx.agents.flawed}&limit=1000`,
    );
    expect(byAgent.body.total_count).toBeGreaterThan(0);
    for (const e of byAgent.body.items) {
      expect(e.variants?.map((v) => v.agent_id)).toContain(fx.agents.flawed);
    }
    // Two agent_id searches: the experiments with a variant of each.
    const both = await createDraft({
      variants: [
        { name: 'control', weight: 50, is_control: true, agent_id: fx.agents.pinned },
        { name: 'candidate', weight: 50, agent_id: fx.agents.unpinned },
      ],
    });
    const byPinned = await call<Schemas['ExperimentListResponse']>(
      'GET',
      `?search_fields=agent_id&search_field_values=${fx.agents.pinned}&limit=1000`,
    );
    const byBoth = await call<Schemas['ExperimentListResponse']>(
      'GET',
      `?search_fields=agent_id&search_fields=agent_id&search_field_values=${fx.agents.pinned}&search_field_values=${fx.agents.unpinned}&limit=1000`,
    );
    const withBoth = byPinned.body.items.filter((e) =>
      e.variants?.some((v) => v.agent_id === fx.agents.unpinned),
    );
    expect(byBoth.body.items.map((e) => e.id)).toEqual(withBoth.map((e) => e.id));
    expect(byBoth.body.items.map((e) => e.id)).toContain(both.id);
    expect(byBoth.body.total_count).toBeLessThan(byPinned.body.total_count!);
    const badAgent = await call<Schemas['HTTPValidationError']>(
      'GET',
      '?search_fields=agent_id&search_field_values=seven',
    );
    expectProblem(
      badAgent,
      ['query', 'search_field_values', 0],
      /not a whole number/,
      'int_parsing',
    );

    const drafts = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?search_fields=status&search_field_values=draft&order_by=id&order_by_direction=desc&limit=1000',
    );
    const ids = drafts.body.items.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(drafts.body.items.every((e) => e.status === 'draft')).toBe(true);

    const projected = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?fields=name&fields=agent_id&limit=1',
    );
    expect(Object.keys(projected.body.items[0]!).sort()).toEqual(['id', 'name', 'variants']);

    const window = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?start_datetime=2000-01-01T00:00:00Z&end_datetime=2000-01-02T00:00:00Z',
    );
    expect(window.body.total_count).toBe(0);

    const globexList = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?limit=1000',
      undefined,
      globex.key,
    );
    expect(globexList.body.items.every((e) => e.target_id === globexFx.targets.second)).toBe(true);
  });

  it("orders by agent_id as each one's control variant's agent, after its variants change", async () => {
    const { pinned, alsoPinned, unpinned } = fx.agents;
    const [low, middle, high] = [pinned, alsoPinned, unpinned].sort((a, b) => a - b) as [
      number,
      number,
      number,
    ];
    const variantsOn = (control: number, other: number) => [
      { name: 'control', weight: 50, is_control: true, agent_id: control },
      { name: 'other', weight: 50, agent_id: other },
    ];
    const moved = await createDraft({ variants: variantsOn(high, middle) });
    await createDraft({ variants: variantsOn(middle, high) });
    // Its control moves past the other's: the order follows.
    const update = await call('PUT', String(moved.id), {
      name: moved.name,
      variants: variantsOn(low, middle),
    });
    expect(update.status).toBe(200);
    for (const direction of ['asc', 'desc'] as const) {
      const page = await call<Schemas['ExperimentListResponse']>(
        'GET',
        `?order_by=agent_id&order_by_direction=${direction}&limit=1000`,
      );
      const keys = page.body.items.map((e) => ({
        agent: e.variants!.find((v) => v.is_control)!.agent_id,
        id: e.id,
      }));
      const ascending = [...keys].sort((a, b) => a.agent - b.agent || a.id - b.id);
      expect(keys).toEqual(direction === 'asc' ? ascending : ascending.reverse());
    }
  });
});
