// A key's shares of requests in progress and in line (CONCURRENT_REQUESTS_PER_KEY,
// CONCURRENT_LIST_READS_PER_KEY, QUEUED_REQUESTS_PER_KEY) are the fleet's: each server process
// holds a key to its part, the share divided by the processes on the database and rounded up,
// and every process counts the others by their heartbeats (runtime/fleet-members.ts).

import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Admission } from '../src/http/admission.js';
import type { AppEnv, AuthContext } from '../src/http/app-env.js';
import { ApiError } from '../src/http/errors.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { createSharedTestDb, type SharedTestDb } from './support/test-database.js';

const METRICS_TOKEN = 'fleet-shares-metrics-token';

describe("a process's part of a key's shares", () => {
  let fleetSize = 1;
  const open = new Set<() => void>();
  let entered = 0;
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set('auth', { keyId: 'k' } as AuthContext);
    c.set('operationId', c.req.query('operation')!);
    await next();
  });
  app.use(
    new Admission({
      requestsPerKey: 4,
      listReadsPerKey: 2,
      queuedPerKey: 5,
      queueWaitMs: 10_000,
      fleetSize: () => fleetSize,
    }).middleware(),
  );
  // A refusal is answered with its status, as the server's error handler does.
  app.onError((error, c) =>
    c.text(error.message, error instanceof ApiError ? (error.status as 429) : 500),
  );
  app.get('/', async (c) => {
    entered += 1;
    await new Promise<void>((resolve) => open.add(resolve));
    return c.text('done');
  });
  const send = (operation: string) => Promise.resolve(app.request(`/?operation=${operation}`));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  const finish = async (answers: Array<Promise<Response>>) => {
    while (open.size > 0) {
      for (const resolve of open) resolve();
      open.clear();
      await settle();
    }
    return Promise.all(answers);
  };

  it('runs a key’s share over the processes, rounded up, and queues its part of the line', async () => {
    for (const [processes, running, queued] of [
      [1, 4, 5],
      [2, 2, 3],
      [3, 2, 2],
      [5, 1, 1],
    ] as const) {
      fleetSize = processes;
      entered = 0;
      const answers = Array.from({ length: 10 }, () => send('experiments_get'));
      await settle();
      expect(entered, `${processes} processes`).toBe(running);
      const refused = (await Promise.all(answers.map((a) => Promise.race([a, settle()])))).filter(
        (answer) => answer instanceof Response && answer.status === 429,
      );
      expect(refused, `${processes} processes`).toHaveLength(10 - running - queued);
      await finish(answers);
    }
  });

  it('runs a key’s list reads over the processes, rounded up', async () => {
    fleetSize = 3;
    entered = 0;
    const answers = Array.from({ length: 3 }, () => send('events_list'));
    await settle();
    expect(entered).toBe(1);
    await finish(answers);
  });
});

describe('server processes counting each other', () => {
  let database: SharedTestDb;
  let servers: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createSharedTestDb();
    servers = await Promise.all(
      [0, 1, 2].map(() =>
        startServerProcess({
          DATABASE_URL: database.databaseUrl,
          METRICS_TOKEN,
          CONCURRENT_REQUESTS_PER_KEY: '4',
        }),
      ),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await database?.close();
  });

  const seen = async (server: ServerProcess) => {
    const text = await fetch(`${server.baseUrl}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    }).then((response) => response.text());
    return Number(/^agentline_fleet_processes (\d+)$/m.exec(text)?.[1]);
  };
  const until = async (check: () => Promise<boolean>, ms: number) => {
    const deadline = performance.now() + ms;
    while (!(await check()) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  it('sees every process within a heartbeat, and one fewer once one stops', async () => {
    await until(async () => (await Promise.all(servers.map(seen))).every((n) => n === 3), 12_000);
    expect(await Promise.all(servers.map(seen))).toEqual([3, 3, 3]);
    await servers.pop()!.stop();
    await until(async () => (await Promise.all(servers.map(seen))).every((n) => n === 2), 12_000);
    expect(await Promise.all(servers.map(seen))).toEqual([2, 2]);
  }, 60_000);
});
