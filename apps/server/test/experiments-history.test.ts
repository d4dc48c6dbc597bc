// An experiment's change history: one entry per change, written with the change, with who made
// it and each changed field's before and after; nothing for a refused change; readable after a
// delete; another organization's id is not found.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseApiKey } from '../src/domain/api-keys.js';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  ({ api, acme, globex, fx } = await createRoutingTestbed());
});

afterAll(() => api.close());

type Change = Schemas['ExperimentChange'];

/** `T` is the body expected, as for `TestApi.request`. */
const call = <T>(method: string, path: string, body?: unknown, key = acme.key) =>
  api.request<T>(method, `/api/v1/experiments/${path}`, { key, body });

const history = (id: number, query = '', key = acme.key) =>
  call<Schemas['ExperimentChangeListResponse']>('GET', `${id}/history${query}`, undefined, key);

/** Every entry of the experiment's history, newest first. */
async function allChanges(id: number): Promise<Change[]> {
  const res = await history(id, '?limit=1000');
  expect(res.status).toBe(200);
  return res.body.items;
}

const variantsOf = (agents: readonly [number, number], weights = [70, 30]) => [
  { name: 'control', weight: weights[0], is_control: true, agent_id: agents[0] },
  { name: 'candidate', weight: weights[1], is_control: false, agent_id: agents[1] },
];

describe('experiment history', () => {
  it('records each change with its actor, request id and before and after, newest first', async () => {
    const agents = [fx.agents.pinned, fx.agents.alsoPinned] as const;
    const created = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.second, agents),
    );
    expect(created.status).toBe(200);
    const id = created.body.id;
    const updated = await call('PUT', String(id), {
      name: 'Shorter answers, half and half',
      description: 'Do shorter answers end sessions sooner?',
      variants: variantsOf(agents, [50, 50]),
    });
    const started = await call('POST', `${id}/start`);
    const stopped = await call('POST', `${id}/stop`);
    const deleted = await call('DELETE', String(id));
    const calls = [deleted, stopped, started, updated, created];
    for (const res of calls) expect(res.status).toBe(200);

    const changes = await allChanges(id);
    expect(changes.map((c) => c.action)).toEqual([
      'deleted',
      'stopped',
      'started',
      'updated',
      'created',
    ]);
    const actor = {
      type: 'api_key',
      key_id: parseApiKey(acme.key)!.keyId,
      key_name: created.body.last_updated_by,
    };
    changes.forEach((change, i) => {
      expect(change.experiment_id).toBe(id);
      expect(change.actor).toEqual(actor);
      expect(change.request_id).toBe(calls[i]!.headers.get('x-request-id'));
    });
    // Newest first, and never out of time order.
    const times = changes.map((c) => Date.parse(c.occurred_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const [onDelete, onStop, onStart, onUpdate, onCreate] = changes;
    expect(onCreate!.changes).toEqual({
      name: { from: null, to: 'Shorter answers' },
      description: { from: null, to: 'Do shorter answers end sessions sooner?' },
      variants: { from: null, to: variantsOf(agents) },
      status: { from: null, to: 'draft' },
    });
    // The update replaced the whole variant set: the previous weights are kept here.
    expect(onUpdate!.changes).toEqual({
      name: { from: 'Shorter answers', to: 'Shorter answers, half and half' },
      variants: { from: variantsOf(agents), to: variantsOf(agents, [50, 50]) },
    });
    expect(onStart!.changes).toEqual({ status: { from: 'draft', to: 'running' } });
    expect(onStop!.changes).toEqual({ status: { from: 'running', to: 'stopped' } });
    expect(onDelete!.changes).toEqual({
      name: { from: 'Shorter answers, half and half', to: null },
      description: { from: 'Do shorter answers end sessions sooner?', to: null },
      variants: { from: variantsOf(agents, [50, 50]), to: null },
      status: { from: 'stopped', to: null },
    });
  });

  it('writes nothing for a change that was refused', async () => {
    const created = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]),
    );
    const id = created.body.id;
    const badWeights = {
      name: 'x',
      variants: variantsOf([fx.agents.pinned, fx.agents.unpinned], [60, 30]),
    };
    expect((await call('PUT', String(id), badWeights)).status).toBe(422);
    expect((await call('POST', `${id}/stop`)).status).toBe(409);
    expect((await call('POST', `${id}/start`)).status).toBe(200);
    expect((await call('DELETE', String(id))).status).toBe(409);
    expect((await call('POST', `${id}/start`)).status).toBe(409);
    const goodBody = { name: 'x', variants: variantsOf([fx.agents.pinned, fx.agents.unpinned]) };
    expect((await call('PUT', String(id), goodBody)).status).toBe(409);
    // A start refused by another running experiment on the target (the database's unique index).
    const rival = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.unpinned]),
    );
    expect((await call('POST', `${rival.body.id}/start`)).status).toBe(409);

    expect((await allChanges(id)).map((c) => c.action)).toEqual(['started', 'created']);
    expect((await allChanges(rival.body.id)).map((c) => c.action)).toEqual(['created']);
    await call('POST', `${id}/stop`);
  });

  it('pages newest first with a cursor, like the other lists', async () => {
    const created = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.flawed]),
    );
    const id = created.body.id;
    for (let i = 0; i < 4; i += 1) {
      const renamed = await call('PUT', String(id), {
        name: `Rename ${i}`,
        variants: variantsOf([fx.agents.pinned, fx.agents.flawed]),
      });
      expect(renamed.status).toBe(200);
    }
    const everything = await allChanges(id);
    expect(everything).toHaveLength(5);
    const walked: Change[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const page = await history(id, query);
      expect(page.status).toBe(200);
      expect(page.body.total_count).toBe(5);
      walked.push(...page.body.items);
      cursor = page.body.next_cursor ?? null;
    }
    expect(walked).toEqual(everything);
    expect(everything.map((c) => c.changes['name']?.to)).toEqual([
      'Rename 3',
      'Rename 2',
      'Rename 1',
      'Rename 0',
      'Shorter answers',
    ]);
  });

  it("is a 404 for an id that never existed and for another organization's experiment, deleted or not", async () => {
    const created = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.unpinned]),
    );
    const id = created.body.id;
    expect((await history(id, '', globex.key)).status).toBe(404);
    expect((await call('DELETE', String(id))).status).toBe(200);
    expect((await history(id)).body.items).toHaveLength(2);
    const foreign = await history(id, '', globex.key);
    expect(foreign.status).toBe(404);
    expect(JSON.stringify(foreign.body)).not.toContain('Shorter answers');
    const unknown = await history(999_999);
    expect(unknown.status).toBe(404);
    expect((unknown.body as unknown as Schemas['ErrorResponse']).detail).toContain(
      'There is no experiment 999999',
    );
  });

  it('records what `agentline load` creates and replaces, with the operator as actor', async () => {
    const records = (weights: [number, number], description = 'Loaded by the operator') =>
      platformRecordsSchema.parse({
        experiments: [
          {
            name: 'Loaded greeting',
            description,
            target: { channel: 'Web chat', target: 'second' },
            variants: [
              { name: 'control', weight: weights[0], is_control: true, agent: 'Pinned' },
              { name: 'candidate', weight: weights[1], agent: 'Also pinned' },
            ],
          },
        ],
      });
    await loadPlatformRecords(api.db, acme.organizationId, records([70, 30]));
    await loadPlatformRecords(api.db, acme.organizationId, records([70, 30]));
    await loadPlatformRecords(api.db, acme.organizationId, records([40, 60]));
    const list = await call<Schemas['ExperimentListResponse']>(
      'GET',
      '?search_fields=name_exact&search_field_values=Loaded%20greeting',
    );
    const id = list.body.items[0]!.id;
    const changes = await allChanges(id);
    // Loading the same draft again changed nothing, and left no entry.
    expect(changes.map((c) => c.action)).toEqual(['updated', 'created']);
    for (const change of changes) {
      expect(change.actor).toEqual({ type: 'operator' });
      expect(change.request_id).toBeNull();
    }
    const agents = [fx.agents.pinned, fx.agents.alsoPinned] as const;
    expect(changes[0]!.changes).toEqual({
      variants: { from: variantsOf(agents), to: variantsOf(agents, [40, 60]) },
    });
    expect(changes[1]!.changes['status']).toEqual({ from: null, to: 'draft' });
  });
});
