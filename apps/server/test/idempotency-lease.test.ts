// Idempotency keys after a crash and over time: a request killed mid-way leaves its key free (its
// answer is stored with its work, or the claim of an experiment write is taken over once its lease
// runs out), the retry's answer is then stored and replayed, keyed sessions routed through a
// SIGKILL are stored exactly once, and expired keys are swept, so under a steady load of fresh
// keys the table stops growing. With the real server process, or the real sweeper.

import { sql } from 'drizzle-orm';
import pino from 'pino';
import { DEFAULT_CONFIG, idempotencyTimesOf } from '../src/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { platformRecordsSchema } from '../src/records/format.js';
import { loadedIds } from '../src/records/load-result.js';
import { loadPlatformRecords } from '../src/records/loader.js';
import { claimIdempotencyKey } from '../src/db/repositories/idempotency.js';
import { experiments, idempotencyKeys, sessions } from '../src/db/schema/sqlite.js';
import { canonicalJson } from '../src/domain/canonical-json.js';
import { requestFingerprint } from '../src/http/idempotency.js';
import { startIdempotencySweeper } from '../src/runtime/periodic-jobs.js';
import {
  startFakeTwilio,
  twilioChannelRecord,
  twilioSid,
  type FakeTwilio,
} from './support/fake-twilio.js';
import { createTenant, createTestApi, type Tenant } from './support/harness.js';
import { experimentBody, loadRoutingFixture } from './support/routing-fixture.js';
import { startServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, queryTestDb } from './support/test-database.js';

const TIMES = idempotencyTimesOf(DEFAULT_CONFIG);

async function keyRows(db: Db): Promise<number> {
  const [row] = await queryTestDb<{ n: number }>(
    db,
    sql`SELECT count(*) AS n FROM ${idempotencyKeys}`,
  );
  return Number(row!.n);
}

describe('a request killed between its claim and its answer', () => {
  const ACCOUNT_SID = twilioSid('AC', 0x1ea5e);
  const AUTH_TOKEN = 'lease-test-auth-token-0123456789abcdef';
  const PHONE = '+14155550100';
  let databaseUrl: string;
  let acme: Tenant;
  let channelId: number;
  let twilio: FakeTwilio;

  beforeAll(async () => {
    twilio = await startFakeTwilio({
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      data: {
        incomingNumbers: [{ sid: twilioSid('PN', 1), phoneNumber: PHONE }],
        services: [{ sid: twilioSid('MG', 1), numberSids: [twilioSid('PN', 1)] }],
        campaigns: [
          {
            sid: twilioSid('QE', 1),
            serviceSid: twilioSid('MG', 1),
            brandSid: twilioSid('BN', 1),
            status: 'VERIFIED',
          },
        ],
        brands: [{ sid: twilioSid('BN', 1), status: 'APPROVED' }],
      },
    });
    databaseUrl = await freshDatabaseUrl();
    const db = createDb(databaseUrl);
    await migrateDb(db);
    acme = await createTenant(db, 'Acme');
    const { records } = await loadPlatformRecords(
      db,
      acme.organizationId,
      platformRecordsSchema.parse({
        channels: [
          twilioChannelRecord('Twilio line', {
            accountSid: ACCOUNT_SID,
            authToken: AUTH_TOKEN,
            baseUrl: twilio.baseUrl,
            timeoutMs: 20_000,
            numbers: [PHONE],
          }),
        ],
      }),
    );
    channelId = loadedIds(records, 'channels')['Twilio line']!;
    await db.close();
  }, 60_000);

  afterAll(() => twilio.close());

  it('leaves nothing behind: the retry is answered at once, then replayed', async () => {
    const env = { DATABASE_URL: databaseUrl };
    const check = (baseUrl: string) =>
      fetch(`${baseUrl}/api/v1/channels/telephony/${channelId}/numbers/verify-a2p-compliance`, {
        method: 'POST',
        headers: {
          'Service-API-Key': acme.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': 'killed-mid-request',
        },
        body: JSON.stringify({ phone: PHONE }),
      });

    // The provider holds its answer, so the server is surely mid-request when killed.
    twilio.behaviour.delayMs = 10_000;
    const first = await startServerProcess(env);
    const doomed = check(first.baseUrl).catch((error: unknown) => error);
    await expect.poll(() => twilio.requests.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await first.stop('SIGKILL');
    expect(await doomed).toBeInstanceOf(Error);

    twilio.behaviour.delayMs = 0;
    const second = await startServerProcess(env);
    try {
      const requestsBefore = twilio.requests.length;
      const retried = await check(second.baseUrl);
      expect(retried.status).toBe(200);
      expect(await retried.json()).toMatchObject({ a2p_approved: true });
      const providerReads = twilio.requests.length - requestsBefore;
      expect(providerReads).toBeGreaterThan(0);
      // The answer is stored now: a further retry replays it without asking the provider again.
      const replayed = await check(second.baseUrl);
      expect(replayed.status).toBe(200);
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(twilio.requests.length - requestsBefore).toBe(providerReads);
    } finally {
      await second.stop();
    }
  }, 60_000);
});

describe('an experiment write whose request died after claiming its key', () => {
  it('is refused with 409 for the lease, then taken over by a retry, once', async () => {
    const api = await createTestApi();
    const acme = await createTenant(api.db, 'Acme');
    const fx = await loadRoutingFixture(api.db, acme.organizationId);
    const app = createApp({ db: api.db, idempotencyTimes: { retentionMs: 60_000, leaseMs: 300 } });
    const body = JSON.stringify(
      experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
    );
    const create = () =>
      app.request('/api/v1/experiments/', {
        method: 'POST',
        headers: {
          'Service-API-Key': acme.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': 'orphaned-claim',
        },
        body,
      });
    try {
      // What a process killed between the claim and the answer leaves behind.
      const hash = requestFingerprint(
        'POST',
        '/api/v1/experiments/',
        canonicalJson(JSON.parse(body)),
      );
      const keyId = acme.key.split('_')[1]!;
      await claimIdempotencyKey(api.db, keyId, 'orphaned-claim', hash, TIMES);
      expect((await create()).status).toBe(409);
      await new Promise((resolve) => setTimeout(resolve, 350));
      const retried = await create();
      expect(retried.status).toBe(200);
      const replayed = await create();
      expect(replayed.headers.get('idempotent-replayed')).toBe('true');
      expect(await replayed.json()).toEqual(await retried.json());
      const [row] = await queryTestDb<{ n: number }>(
        api.db,
        sql`SELECT count(*) AS n FROM ${experiments} WHERE ${experiments.organizationId} = ${acme.organizationId}`,
      );
      expect(Number(row!.n)).toBe(1);
    } finally {
      await api.close();
    }
  });
});

describe('keyed sessions routed while the server is killed', () => {
  it('are each stored exactly once after the retries', async () => {
    const databaseUrl = await freshDatabaseUrl();
    const db = createDb(databaseUrl);
    await migrateDb(db);
    const acme = await createTenant(db, 'Acme');
    const fx = await loadRoutingFixture(db, acme.organizationId);
    const route = (baseUrl: string, n: number) =>
      fetch(`${baseUrl}/api/v1/channels/targets/${fx.targets.main}/sessions`, {
        method: 'POST',
        headers: {
          'Service-API-Key': acme.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': `route-${n}`,
        },
        body: JSON.stringify({ user_id: `caller-${n}` }),
      }).then(
        (res) => res.status,
        () => 0,
      );
    const CALLS = 300;
    const first = await startServerProcess({ DATABASE_URL: databaseUrl });
    let answered = 0;
    const inFlight = Array.from({ length: 16 }, async (_, worker) => {
      for (let n = worker; n < CALLS; n += 16)
        if ((await route(first.baseUrl, n)) === 200) answered += 1;
    });
    while (answered < 60) await new Promise((resolve) => setTimeout(resolve, 2));
    await first.stop('SIGKILL');
    await Promise.all(inFlight);
    expect(answered).toBeLessThan(CALLS);

    const second = await startServerProcess({ DATABASE_URL: databaseUrl });
    try {
      const statuses = await Promise.all(
        Array.from({ length: CALLS }, (_, n) => route(second.baseUrl, n)),
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
      const perCaller = await queryTestDb<{ user_id: string; n: number }>(
        db,
        sql`SELECT user_id, count(*) AS n FROM ${sessions} GROUP BY user_id`,
      );
      expect(perCaller).toHaveLength(CALLS);
      expect(perCaller.filter((row) => Number(row.n) !== 1)).toEqual([]);
    } finally {
      await second.stop();
      await db.close();
    }
  }, 60_000);
});

describe('the sweep of expired keys', () => {
  it('keeps the table from growing under a steady load of fresh keys', async () => {
    const api = await createTestApi();
    const times = { retentionMs: 400, leaseMs: 100 };
    const app = createApp({ db: api.db, idempotencyTimes: times });
    const acme = await createTenant(api.db, 'Acme');
    const stop = startIdempotencySweeper(api.db, pino({ level: 'silent' }), {
      retentionMs: times.retentionMs,
      intervalMs: 100,
    });
    try {
      // Rows may outlive the retention by the sweep's interval and the time a sweep waits for
      // its turn on a busy machine: allow that much, no more.
      const SWEEP_LAG_MS = 500;
      const sentAt: number[] = [];
      const excess: Array<{ rows: number; recent: number }> = [];
      const started = Date.now();
      while (Date.now() - started < 2_400) {
        const res = await app.request(`/api/v1/experiments/?limit=0`, {
          method: 'POST',
          headers: {
            'Service-API-Key': acme.key,
            'Content-Type': 'application/json',
            'Idempotency-Key': `fresh-${sentAt.length}`,
          },
          body: '{}',
        });
        expect(res.status).toBe(422);
        sentAt.push(Date.now());
        if (sentAt.length % 25 === 0) {
          const rows = await keyRows(api.db);
          const since = Date.now() - times.retentionMs - SWEEP_LAG_MS;
          const recent = sentAt.filter((at) => at >= since).length;
          if (rows > recent) excess.push({ rows, recent });
        }
        // In-process requests on SQLite never wait on I/O: give the sweeper's timer its turns,
        // as a server's network waits do.
        await new Promise((resolve) => setImmediate(resolve));
      }
      // The table holds only what arrived within the retention: it does not grow with the load.
      expect(excess).toEqual([]);
      expect(await keyRows(api.db)).toBeLessThan(sentAt.length / 2);
    } finally {
      stop();
      await api.close();
    }
  });
});
