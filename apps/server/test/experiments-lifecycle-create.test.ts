// Experiments: the rules a new experiment must pass (docs/decisions.md section 6), and the answers
// to unknown and foreign ids, with each response checked against the spec by the harness.

import { describe, expect, it } from 'vitest';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import { expectProblem, useExperimentsTestbed } from './support/experiments-testbed.js';
import { anyNumber, stringMatching } from './support/matchers.js';
import { experimentBody, type RoutingFixture } from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
let globexFx: RoutingFixture;

const { call } = useExperimentsTestbed((testbed) => {
  ({ api, acme, globex, fx, globexFx } = testbed);
});

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
