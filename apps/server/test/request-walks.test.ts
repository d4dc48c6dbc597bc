// How many hand-written files an operation runs through, as V8's precise coverage counts them: the
// files of apps/server/src (generated code apart) with a function called between two takes of the
// coverage counters. A request is counted from its handler down: less the files that the same
// request refused for want of a permission runs, which are the middleware every API request
// crosses. A webhook delivery is counted whole: from an event stored to its attempt recorded.
// Each operation runs once before it is counted, so the count is a warm process's and not its
// first request's, and is counted three times: a file counts if every time ran it, which leaves
// out what a request does now and then (marking its key used a minute after the last time) and
// what the process runs beside it (a busy machine stretches each take over more of its timers).
// The bounds keep the walks short for whoever reads them next (docs/architecture.md lists them);
// `WALKS=print` prints each walk's files, and a walk over its bound names them.

import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookAttempts } from '../src/db/schema/sqlite.js';
import { createWebhookEndpoint } from '../src/use-cases/webhook-endpoints.js';
import { WebhookDispatcher } from '../src/runtime/webhooks/dispatcher.js';
import { createKey, createTestApi, type Schemas, type TestApi } from './support/harness.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { insertTestEvents, queryTestDb } from './support/test-database.js';
import { everyEventTo, inProcessDispatcher } from './support/webhook-delivery-testbed.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { createTenant, type Tenant } from './support/harness.js';

const SOURCE = fileURLToPath(new URL('../src/', import.meta.url));

/** The most files each walk may run through: today's, to be lowered as the walks shorten. */
const BOUNDS = { eventsList: 18, webhookDelivery: 16, experimentStart: 16 };

const inspector = new Session();
let api: TestApi;
let acme: Tenant;
let fx: RoutingFixture;

beforeAll(async () => {
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  api = await createTestApi();
  acme = await createTenant(api.db, 'Acme');
  fx = await loadRoutingFixture(api.db, acme.organizationId);
});

afterAll(async () => {
  await inspector.post('Profiler.stopPreciseCoverage');
  inspector.disconnect();
  await api?.close();
});

/** The hand-written source files that ran a function while `operation` ran. */
async function filesRunOnce(operation: () => Promise<unknown>): Promise<Set<string>> {
  // A take resets the counters: what the next take counts ran after this one.
  await inspector.post('Profiler.takePreciseCoverage');
  await operation();
  const { result } = await inspector.post('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  for (const script of result) {
    const path = script.url.startsWith('file://') ? fileURLToPath(script.url) : script.url;
    if (!path.startsWith(SOURCE) || path.includes('/generated/')) continue;
    if (script.functions.some((fn) => fn.ranges[0]!.count > 0)) files.add(relative(SOURCE, path));
  }
  return files;
}

/** The files every one of `operations`, twins of one another, ran through. */
async function filesRunBy(...operations: Array<() => Promise<unknown>>): Promise<Set<string>> {
  let files: Set<string> | undefined;
  for (const operation of operations) {
    const ran = await filesRunOnce(operation);
    files = new Set(files ? [...files].filter((file) => ran.has(file)) : ran);
  }
  return files!;
}

/** The files of `walk` that `middleware` did not run, printed with WALKS=print. */
function fromTheHandlerDown(name: string, walk: Set<string>, middleware: Set<string>): string[] {
  const files = [...walk].filter((file) => !middleware.has(file)).sort();
  if (process.env.WALKS === 'print') {
    console.info(`${name}: ${files.length} files\n  ${files.join('\n  ')}`);
  }
  return files;
}

/** What a failed check of a walk shows: every file of the walk and of the middleware. */
function walkShown(files: string[], middleware: Set<string>): string {
  return `walk: ${files.join(' ')}; middleware: ${[...middleware].sort().join(' ')}`;
}

describe('the walks of three operations', () => {
  it(`lists events through at most ${BOUNDS.eventsList} files`, async () => {
    const denied = await createKey(api.db, acme.organizationId, ['PROMPTS_READ']);
    await insertTestEvents(
      api.db,
      Array.from({ length: 30 }, (_, i) => ({
        organizationId: acme.organizationId,
        timestamp: `2026-05-01T10:${String(i).padStart(2, '0')}:00.000Z`,
        description: `event ${i}`,
      })),
    );
    const list = (page: number, key = acme.key) =>
      api.request('GET', `/api/v1/events/?limit=5&page=${page}`, { key });
    expect((await list(0)).status).toBe(200);
    expect((await list(1, denied)).status).toBe(403);
    const refused = (page: number) => async () =>
      expect((await list(page, denied)).status).toBe(403);
    const middleware = await filesRunBy(refused(2), refused(3), refused(4));
    // Pages not asked before with a key that may list: read from the database, not kept answers.
    const listed = (page: number) => async () => expect((await list(page)).status).toBe(200);
    const walk = await filesRunBy(listed(1), listed(4), listed(5));
    const files = fromTheHandlerDown('events list', walk, middleware);
    expect(files, walkShown(files, middleware)).toContain('routes/events/events.handlers.ts');
    expect(files.length, files.join(' ')).toBeLessThanOrEqual(BOUNDS.eventsList);
  });

  it(`starts an experiment through at most ${BOUNDS.experimentStart} files`, async () => {
    const denied = await createKey(api.db, acme.organizationId, ['EVENTS_READ']);
    const draft = async (targetId: number) => {
      const res = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
        key: acme.key,
        body: experimentBody(targetId, [fx.agents.pinned, fx.agents.alsoPinned]),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.id;
    };
    const call = (id: number, action: 'start' | 'stop', key = acme.key) =>
      api.request('POST', `/api/v1/experiments/${id}/${action}`, { key });
    const warmUp = await draft(fx.targets.main);
    expect((await call(warmUp, 'start')).status).toBe(200);
    expect((await call(warmUp, 'stop')).status).toBe(200);
    const [onMain, onSecond, onMainLater] = [
      await draft(fx.targets.main),
      await draft(fx.targets.second),
      await draft(fx.targets.main),
    ];
    const refused = (id: number) => async () =>
      expect((await call(id, 'start', denied)).status).toBe(403);
    const middleware = await filesRunBy(refused(onMain), refused(onSecond), refused(onMainLater));
    const started = (id: number) => async () => expect((await call(id, 'start')).status).toBe(200);
    // The third start stops the first on its target beforehand; the start alone is in every take.
    const walk = await filesRunBy(started(onMain), started(onSecond), async () => {
      expect((await call(onMain, 'stop')).status).toBe(200);
      await started(onMainLater)();
    });
    const files = fromTheHandlerDown('experiment start', walk, middleware);
    expect(files, walkShown(files, middleware)).toContain(
      'routes/experiments/experiments.handlers.ts',
    );
    expect(files.length, files.join(' ')).toBeLessThanOrEqual(BOUNDS.experimentStart);
  });

  it(`delivers a webhook through at most ${BOUNDS.webhookDelivery} files`, async () => {
    const targets = { allowHttp: true, allowPrivateAddresses: true };
    const receiver: WebhookReceiver = await startWebhookReceiver();
    const dispatcher = new WebhookDispatcher(inProcessDispatcher(api.db, targets));
    const globex = await createTenant(api.db, 'Globex');
    await createWebhookEndpoint(api.db, globex.organizationId, everyEventTo(receiver.url), targets);
    const attempts = async () => {
      const [row] = await queryTestDb<{ n: number | string }>(
        api.db,
        sql`SELECT COUNT(*) AS n FROM ${webhookAttempts}`,
      );
      return Number(row!.n);
    };
    const deliverOne = async (minute: number) => {
      const before = await attempts();
      await insertTestEvents(api.db, [
        { organizationId: globex.organizationId, timestamp: `2026-05-02T10:0${minute}:00.000Z` },
      ]);
      await expect.poll(attempts, { timeout: 10_000 }).toBe(before + 1);
    };
    try {
      dispatcher.start();
      await deliverOne(0);
      const walk = await filesRunBy(
        () => deliverOne(1),
        () => deliverOne(2),
        () => deliverOne(3),
      );
      expect(receiver.received).toHaveLength(4);
      const files = fromTheHandlerDown('webhook delivery', walk, new Set());
      expect(files, walkShown(files, new Set())).toContain('runtime/webhooks/delivery-attempt.ts');
      expect(files.length, files.join(' ')).toBeLessThanOrEqual(BOUNDS.webhookDelivery);
    } finally {
      await dispatcher.stop();
      await receiver.close();
    }
  }, 30_000);
});
