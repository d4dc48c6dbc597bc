// The real SDK against the real server over HTTP on 127.0.0.1.

import {
  AuthenticationError,
  ConflictError,
  PermissionDeniedError,
  UnprocessableEntityError,
  createClient,
} from '@agentline/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { DEFAULT_CONFIG } from '../src/config.js';
import { createKey, createTenant, createTestApi, type TestApi } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import { loadRoutingFixture, type RoutingFixture } from './support/routing-fixture.js';
import { insertTestEvents } from './support/test-database.js';

let api: TestApi;
let server: LiveServer;
let key: string;
let organizationId: number;
let fx: RoutingFixture;

beforeAll(async () => {
  api = await createTestApi();
  ({ key, organizationId } = await createTenant(api.db, 'Acme'));
  await insertTestEvents(
    api.db,
    Array.from({ length: 7 }, (_, i) => ({
      organizationId,
      timestamp: `2026-05-0${i + 1}T00:00:00.000Z`,
      category: i % 2 === 0 ? 'session' : 'tool',
      type: `type-${i}`,
    })),
  );
  fx = await loadRoutingFixture(api.db, organizationId);
  server = await startLiveServer(api.app);
});

afterAll(async () => {
  await server.close();
  await api.close();
});

describe('@agentline/sdk against the running server', () => {
  it('lists and searches events', async () => {
    const client = createClient({ apiKey: key, baseUrl: server.baseUrl });
    const page = await client.events.list({
      search_fields: ['category'],
      search_field_values: ['session'],
      order_by: 'timestamp',
      order_by_direction: 'asc',
    });
    expect(page.total_count).toBe(4);
    expect(page.items.map((e) => e.type)).toEqual(['type-0', 'type-2', 'type-4', 'type-6']);
  });

  it('iterates over every page by cursor, with no duplicate while sessions are routed', async () => {
    const client = createClient({ apiKey: key, baseUrl: server.baseUrl });
    const whole = await client.events.list({ limit: 1000 });
    const seen: string[] = [];
    for await (const event of client.events.iterate({ limit: 3 })) {
      seen.push(JSON.stringify(event));
      // New events land before the walk (newest first): an offset walk would repeat items.
      await client.sessions.route(fx.targets.main, {});
    }
    expect(seen).toEqual(whole.items.map((event) => JSON.stringify(event)));
  });

  it('throws typed errors the server answers', async () => {
    const anonymous = createClient({ apiKey: '', baseUrl: server.baseUrl });
    await expect(anonymous.events.list()).rejects.toBeInstanceOf(AuthenticationError);

    const limited = createClient({
      apiKey: await createKey(api.db, organizationId, ['PROMPTS_READ']),
      baseUrl: server.baseUrl,
    });
    const denied = await limited.events.list().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(PermissionDeniedError);
    expect((denied as PermissionDeniedError).requestId).toMatch(/.+/);

    const client = createClient({ apiKey: key, baseUrl: server.baseUrl });
    const invalid = await client.events.list({ limit: 1001 }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(UnprocessableEntityError);
    expect((invalid as UnprocessableEntityError).detail[0]?.loc).toEqual(['query', 'limit']);
  });

  it("tells a key its own role's permissions, sorted, a parked key's as none", async () => {
    const reader = await createKey(api.db, organizationId, ['PROMPTS_READ', 'EVENTS_READ']);
    const client = createClient({ apiKey: reader, baseUrl: server.baseUrl });
    const info = await client.keys.current();
    expect(info).toMatchObject({
      key_id: reader.split('_')[1],
      permissions: ['EVENTS_READ', 'PROMPTS_READ'],
      organization: { id: organizationId, name: 'Acme' },
    });
    expect(JSON.stringify(info)).not.toContain(reader.split('_')[2]);
    const parked = createClient({
      apiKey: await createKey(api.db, organizationId, []),
      baseUrl: server.baseUrl,
    });
    expect((await parked.keys.current()).permissions).toEqual([]);
    const anonymous = createClient({ apiKey: '', baseUrl: server.baseUrl });
    await expect(anonymous.keys.current()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('finds the ids an experiment needs through the agents and targets lists', async () => {
    const client = createClient({ apiKey: key, baseUrl: server.baseUrl });
    const agents = [];
    for await (const agent of client.agents.iterate({ limit: 1 })) agents.push(agent);
    expect(Object.fromEntries(agents.map((agent) => [agent.name, agent.id]))).toEqual({
      Pinned: fx.agents.pinned,
      Unpinned: fx.agents.unpinned,
      'Also pinned': fx.agents.alsoPinned,
      Flawed: fx.agents.flawed,
    });
    const live = await client.channelTargets.list({
      search_fields: ['is_agent_test'],
      search_field_values: ['false'],
      order_by: 'target',
    });
    expect(live.items.map((target) => [target.target, target.id])).toEqual([
      ['main', fx.targets.main],
      ['orphan', fx.targets.orphan],
      ['second', fx.targets.second],
    ]);
  });

  it('drives a whole experiment: create, start, route, results, stop, delete', async () => {
    const client = createClient({ apiKey: key, baseUrl: server.baseUrl });
    const created = await client.experiments.create({
      name: 'Greeting test',
      target_id: fx.targets.main,
      variants: [
        { name: 'control', weight: 50, is_control: true, agent_id: fx.agents.pinned },
        { name: 'friendly', weight: 50, agent_id: fx.agents.unpinned },
      ],
    });
    expect(created.status).toBe('draft');

    const started = await client.experiments.start(created.id);
    expect(started.experiment.status).toBe('running');
    expect(started.warnings).toHaveLength(1);
    expect(started.warnings[0]).toContain('does not pin a prompt version');

    const routed = [];
    for (let i = 0; i < 40; i += 1) {
      routed.push(await client.sessions.route(fx.targets.main, { user_id: `caller-${i}` }));
    }
    expect(routed.every((s) => s.experiment_id === created.id)).toBe(true);

    const results = await client.experiments.results(created.id);
    const counted = Object.fromEntries(
      results.variants.map((v) => [v.variant_id, v.session_count]),
    );
    for (const variant of created.variants) {
      expect(counted[variant.id]).toBe(routed.filter((s) => s.variant_id === variant.id).length);
    }
    const timeline = await client.experiments.timeline(created.id, {
      interval: 'hour',
      time_zone: 'Asia/Kathmandu',
    });
    // One bucket or two (a run across a local hour); either way they add up to the results.
    const inBuckets = new Map<number, number>();
    for (const { start, variants } of timeline.buckets) {
      expect(new Date(start).getUTCMinutes()).toBe(15);
      for (const v of variants) {
        inBuckets.set(v.variant_id, (inBuckets.get(v.variant_id) ?? 0) + v.session_count);
      }
    }
    expect(Object.fromEntries(inBuckets)).toEqual(counted);

    await expect(client.experiments.delete(created.id)).rejects.toBeInstanceOf(ConflictError);
    expect((await client.experiments.stop(created.id)).status).toBe('stopped');
    expect(await client.experiments.delete(created.id)).toEqual({ id: created.id, deleted: true });
  });

  it('answers 64 parallel calls on one key, through the queue and past a full one', async () => {
    const admission = {
      concurrentRequestsPerKey: DEFAULT_CONFIG.concurrentRequestsPerKey,
      concurrentListReadsPerKey: DEFAULT_CONFIG.concurrentListReadsPerKey,
    };
    // The default queue takes them all; a queue of 8 refuses most of them at first, and the
    // SDK's default retries, spread after Retry-After, bring every one of them in.
    for (const queuedRequestsPerKey of [DEFAULT_CONFIG.queuedRequestsPerKey, 8]) {
      const queueing = await startLiveServer(
        createApp({ db: api.db, ...admission, queuedRequestsPerKey }),
      );
      try {
        const client = createClient({ apiKey: key, baseUrl: queueing.baseUrl });
        const routed = await Promise.all(
          Array.from({ length: 64 }, (_, i) =>
            client.sessions.route(fx.targets.main, { user_id: `parallel-${i}` }),
          ),
        );
        expect(routed).toHaveLength(64);
        const lists = await Promise.all(Array.from({ length: 64 }, () => client.agents.list()));
        expect(lists).toHaveLength(64);
      } finally {
        await queueing.close();
      }
    }
  });
});
