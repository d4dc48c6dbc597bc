// Experiments: every rule and every transition of the state table (docs/decisions.md section 6),
// legal and illegal, with each response checked against the spec by the harness.

import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { experiments, sessions } from '../src/db/schema/sqlite.js';
import type { ApiResponse, Schemas, Tenant, TestApi } from './support/harness.js';
import { anyNumber, anyString, stringMatching } from './support/matchers.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let globexFx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, globex, fx, globexFx } = await createRoutingTestbed());
});

afterAll(() => api.close());

// Each test starts with no running experiment, so one failing test cannot block the targets of
// the next ones.
afterEach(async () => {
  await queryTestDb(
    api.db,
    sql`UPDATE ${experiments} SET status = 'stopped' WHERE ${experiments.status} = 'running'`,
  );
});

/** `T` is the body expected: an experiment, a page of them, or the error of a refusal. */
const call = <T>(method: string, path: string, body?: unknown, key = acme.key) =>
  api.request<T>(method, `/api/v1/experiments/${path}`, { key, body });

async function createDraft(overrides: Record<string, unknown> = {}, targetId = fx.targets.second) {
  const res = await call<Schemas['Experiment']>(
    'POST',
    '',
    experimentBody(targetId, [fx.agents.pinned, fx.agents.alsoPinned], overrides),
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function createRunning(targetId: number) {
  const draft = await createDraft({}, targetId);
  expect((await call('POST', `${draft.id}/start`)).status).toBe(200);
  return draft;
}

async function createStopped(targetId: number) {
  const running = await createRunning(targetId);
  expect((await call('POST', `${running.id}/stop`)).status).toBe(200);
  return running;
}

function expectProblem(
  res: ApiResponse<Schemas['HTTPValidationError']>,
  loc: unknown[],
  msgPart: string | RegExp,
  type?: string,
) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  const problem = res.body.detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(
    problem,
    `no problem at ${JSON.stringify(loc)} in ${JSON.stringify(res.body)}`,
  ).toBeDefined();
  expect(problem?.msg).toMatch(msgPart);
  if (type) expect(problem?.type).toBe(type);
}

describe('create', () => {
  it('creates a draft with the whole record', async () => {
    const res = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]),
    );
    expect(res.status).toBe(200);
    const e = res.body;
    expect(e).toMatchObject({
      name: 'Shorter answers',
      description: 'Do shorter answers end sessions sooner?',
      target_id: fx.targets.main,
      status: 'draft',
      started_at: null,
      stopped_at: null,
      last_updated_by: stringMatching(/^key-/),
      target: {
        id: fx.targets.main,
        target: 'main',
        target_mode: 'inbound',
        channel_name: 'Web chat',
      },
    });
    expect(e.variants).toEqual([
      {
        id: anyNumber(),
        name: 'control',
        weight: 70,
        is_control: true,
        agent_id: fx.agents.pinned,
        agent_name: 'Pinned',
      },
      {
        id: anyNumber(),
        name: 'candidate',
        weight: 30,
        is_control: false,
        agent_id: fx.agents.unpinned,
        agent_name: 'Unpinned',
      },
    ]);
    expect(e.created_at).toBe(e.updated_at);
    const got = await call<Schemas['Experiment']>('GET', String(e.id));
    expect(got.body).toEqual(e);
  });

  it('rejects a body without variants (the generated client of 1.0.65 wrongly allows it)', async () => {
    const { variants: _, ...withoutVariants } = experimentBody(fx.targets.main, [
      fx.agents.pinned,
      fx.agents.unpinned,
    ]);
    expectProblem(
      await call('POST', '', withoutVariants),
      ['body', 'variants'],
      /required/,
      'missing',
    );
  });

  it.each([
    [
      'one variant',
      [{ name: 'a', weight: 100, is_control: true, agent_id: 1 }],
      ['body', 'variants'],
      'too_short',
    ],
    [
      'eleven variants',
      Array.from({ length: 11 }, (_, i) => ({ name: `v${i}`, weight: 9, agent_id: i + 1 })),
      ['body', 'variants'],
      'too_long',
    ],
  ])('rejects %s', async (_, variants, loc, type) => {
    expectProblem(
      await call('POST', '', { name: 'x', target_id: fx.targets.main, variants }),
      loc,
      /./,
      type,
    );
  });

  it('rejects weights that do not total 100, saying the total', async () => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]);
    body.variants[1]!.weight = 20;
    expectProblem(
      await call('POST', '', body),
      ['body', 'variants'],
      /total 90; they must total 100.*whole percentages/,
    );
  });

  it.each([
    [0, 'greater_than_equal'],
    [100, 'less_than_equal'],
    ['50', 'int_type'],
    [50.5, 'int_type'],
  ])('rejects weight %s', async (weight, type) => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]);
    (body.variants[0] as Record<string, unknown>).weight = weight;
    expectProblem(await call('POST', '', body), ['body', 'variants', 0, 'weight'], /./, type);
  });

  it.each([
    ['no control', [false, false], /Exactly one variant must have is_control: true; 0 do/],
    ['two controls', [true, true], /Exactly one variant must have is_control: true; 2 do/],
  ])('rejects %s', async (_, controls, message) => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]);
    body.variants.forEach((v, i) => ((v as Record<string, unknown>).is_control = controls[i]));
    expectProblem(await call('POST', '', body), ['body', 'variants'], message);
  });

  it('rejects two variants on one agent, pointing at the second', async () => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.pinned]);
    expectProblem(
      await call('POST', '', body),
      ['body', 'variants', 1, 'agent_id'],
      /different agent/,
    );
  });

  it('rejects two variants with one name', async () => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]);
    body.variants[1]!.name = 'control';
    expectProblem(await call('POST', '', body), ['body', 'variants', 1, 'name'], /unique/);
  });

  it.each([
    ['an unknown agent', () => 999_999],
    ["another organization's agent", () => globexFx.agents.pinned],
  ])('rejects %s', async (_, agent) => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, agent()]);
    expectProblem(
      await call('POST', '', body),
      ['body', 'variants', 1, 'agent_id'],
      /no agent \d+ in this organization/,
    );
  });

  it.each([
    ['an unknown target', () => 999_999, /no channel target/],
    ["another organization's target", () => globexFx.targets.main, /no channel target/],
    ['a built-in agent-test target', () => fx.targets.agentTest, /agent-test target/],
  ])('rejects %s', async (_, target, message) => {
    const body = experimentBody(target(), [fx.agents.pinned, fx.agents.unpinned]);
    expectProblem(await call('POST', '', body), ['body', 'target_id'], message);
  });

  it.each([
    ['a missing name', { name: undefined }, ['body', 'name'], 'missing'],
    ['an empty name', { name: '' }, ['body', 'name'], 'string_too_short'],
    ['a string target id', { target_id: '5' }, ['body', 'target_id'], 'int_type'],
  ])('rejects %s', async (_, overrides, loc, type) => {
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned], overrides);
    expectProblem(await call('POST', '', body), loc, /./, type);
  });

  it('rejects a body that is not JSON (422), and one sent as another content type (415)', async () => {
    const broken = await api.request<Schemas['HTTPValidationError']>(
      'POST',
      '/api/v1/experiments/',
      { key: acme.key, body: '{"name": ' },
    );
    expectProblem(broken, ['body'], /not valid JSON/, 'json_invalid');
    const form = await api.request<Schemas['ErrorResponse']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: 'name=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      detail: stringMatching(/application\/x-www-form-urlencoded.*application\/json/),
    });
  });

  it('writes nothing when a rule fails', async () => {
    const before = (await call<Schemas['ExperimentListResponse']>('GET', '?limit=0')).body
      .total_count;
    const body = experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.pinned]);
    expect((await call('POST', '', body)).status).toBe(422);
    expect(
      (await call<Schemas['ExperimentListResponse']>('GET', '?limit=0')).body.total_count,
    ).toBe(before);
  });
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

describe('unknown and foreign ids', () => {
  it.each([
    ['GET', ''],
    ['PUT', ''],
    ['DELETE', ''],
    ['POST', '/start'],
    ['POST', '/stop'],
    ['GET', '/results'],
  ])(
    "%s %s answers 404 for an unknown id and for another organization's",
    async (method, suffix) => {
      const foreign = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
        key: globex.key,
        body: experimentBody(globexFx.targets.second, [
          globexFx.agents.pinned,
          globexFx.agents.alsoPinned,
        ]),
      });
      const body =
        method === 'PUT'
          ? experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned])
          : undefined;
      for (const id of [999_999, foreign.body.id]) {
        const res = await call<Schemas['ErrorResponse']>(method, `${id}${suffix}`, body);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
        expect(JSON.stringify(res.body)).not.toContain('Globex');
      }
      // Past the spec's 32-bit ids (and PostgreSQL's integer columns): the path is refused.
      const beyond = await call<Schemas['HTTPValidationError']>(
        method,
        `${2 ** 31}${suffix}`,
        body,
      );
      expect(beyond.status).toBe(422);
      expect(beyond.body.detail[0]).toMatchObject({
        loc: ['path', 'experiment_id'],
        type: 'less_than_equal',
      });
    },
  );

  it("finds nothing for ids past PostgreSQL's integer columns in bodies and filters", async () => {
    const beyond = 2 ** 31;
    const created = await call<Schemas['HTTPValidationError']>(
      'POST',
      '',
      experimentBody(beyond, [fx.agents.pinned, fx.agents.alsoPinned]),
    );
    expect(created.status).toBe(422);
    expect(created.body.detail[0]?.loc).toEqual(['body', 'target_id']);
    const badAgent = await call<Schemas['HTTPValidationError']>(
      'POST',
      '',
      experimentBody(fx.targets.second, [fx.agents.pinned, beyond]),
    );
    expect(badAgent.status).toBe(422);
    expect(badAgent.body.detail[0]?.loc).toEqual(['body', 'variants', 1, 'agent_id']);
    for (const property of ['id', 'target_id', 'agent_id']) {
      const list = await call<Schemas['ExperimentListResponse']>(
        'GET',
        `?search_fields=${property}&search_field_values=${beyond}`,
      );
      expect(list.status).toBe(200);
      expect(list.body.total_count).toBe(0);
    }
  });

  it.each(['abc', '0', '1.5'])('rejects the id %s with 422', async (id) => {
    const res = await call<Schemas['HTTPValidationError']>('GET', id);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['path', 'experiment_id']);
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
});
