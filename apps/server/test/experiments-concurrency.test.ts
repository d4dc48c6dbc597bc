// "One running experiment per target" under concurrent starts, through real HTTP servers: one
// process, and two processes on one database file. Also: sessions routed through two processes
// are all counted, and sticky assignment agrees across processes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createDb, migrateDb, type Db } from '../src/db/client.js';
import { createTenant, type Tenant } from './support/harness.js';
import { startLiveServer, type LiveServer } from './support/live-server.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

let directory: string;
let db: Db;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'agentline-concurrency-'));
  db = createDb(join(directory, 'agentline.db'));
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  fx = await loadRoutingFixture(db, acme.organizationId);
});

afterAll(() => {
  db.close();
  rmSync(directory, { recursive: true, force: true });
});

async function post(baseUrl: string, path: string, body?: unknown) {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function createDrafts(baseUrl: string, targetId: number, n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const res = await post(
      baseUrl,
      '/api/v1/experiments/',
      experimentBody(targetId, [fx.agents.pinned, fx.agents.alsoPinned], { name: `draft ${i}` }),
    );
    expect(res.status).toBe(200);
    ids.push(res.body.id);
  }
  return ids;
}

function expectExactlyOneStarted(results: Array<{ status: number; body: any }>) {
  const statuses = results.map((r) => r.status).sort();
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  expect(statuses.filter((s) => s === 409)).toHaveLength(results.length - 1);
  const winner = results.find((r) => r.status === 200)!.body.experiment.id;
  for (const loser of results.filter((r) => r.status === 409)) {
    expect(loser.body.detail).toContain(`Experiment ${winner} ("`);
  }
  return winner as number;
}

describe('one server process', () => {
  let server: LiveServer;
  beforeAll(async () => {
    server = await startLiveServer(createApp({ db }));
  });
  afterAll(() => server.close());

  it('starts exactly one of 20 drafts started at once on one target', async () => {
    const ids = await createDrafts(server.baseUrl, fx.targets.main, 20);
    const results = await Promise.all(
      ids.map((id) => post(server.baseUrl, `/api/v1/experiments/${id}/start`)),
    );
    const winner = expectExactlyOneStarted(results);
    expect((await post(server.baseUrl, `/api/v1/experiments/${winner}/stop`)).status).toBe(200);
  });
});

describe('two server processes on one database', () => {
  let servers: ServerProcess[];
  beforeAll(async () => {
    const env = { DATABASE_URL: join(directory, 'agentline.db') };
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('starts exactly one of 20 drafts started at once through both', async () => {
    const ids = await createDrafts(servers[0]!.baseUrl, fx.targets.second, 20);
    const results = await Promise.all(
      ids.map((id, i) => post(servers[i % 2]!.baseUrl, `/api/v1/experiments/${id}/start`)),
    );
    const winner = expectExactlyOneStarted(results);

    // Sessions routed through both processes all count, and a user gets one variant everywhere.
    const routedByVariant = new Map<number, number>();
    const variantOfUser = new Map<string, number>();
    const requests = Array.from({ length: 400 }, (_, i) => ({
      server: servers[i % 2]!,
      user: `user-${i % 100}`,
    }));
    const routed = await Promise.all(
      requests.map(({ server, user }) =>
        post(server.baseUrl, `/api/v1/channels/targets/${fx.targets.second}/sessions`, {
          user_id: user,
        }),
      ),
    );
    routed.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(res.body.experiment_id).toBe(winner);
      routedByVariant.set(res.body.variant_id, (routedByVariant.get(res.body.variant_id) ?? 0) + 1);
      const user = requests[i]!.user;
      const earlier = variantOfUser.get(user);
      if (earlier !== undefined) expect(res.body.variant_id).toBe(earlier);
      variantOfUser.set(user, res.body.variant_id);
    });

    const results2 = await fetch(`${servers[1]!.baseUrl}/api/v1/experiments/${winner}/results`, {
      headers: { 'Service-API-Key': acme.key },
    }).then(
      (r) =>
        r.json() as Promise<{ variants: Array<{ variant_id: number; session_count: number }> }>,
    );
    for (const variant of results2.variants) {
      expect(variant.session_count).toBe(routedByVariant.get(variant.variant_id) ?? 0);
    }
    expect(results2.variants.reduce((sum, v) => sum + v.session_count, 0)).toBe(400);
  }, 60_000);
});
