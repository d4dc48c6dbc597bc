// DATABASE_READ_URL: a server process on the PostgreSQL primary sends list reads to a real
// streaming replica (scripts/postgres-replica-setup.sh), through the SDK. The replica's replay is
// paused to see which of the two answered: a read the replica served does not show what the
// primary committed after the pause.

import { createClient } from '@agentline/sdk';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db, type PostgresDb } from '../src/db/engine/client.js';
import { ReplicaReads } from '../src/runtime/replica-reads.js';
import { insertTestEvents } from './support/test-database.js';
import { loadRecords } from './fixtures/prompts-records.js';
import { loadRoutingFixture } from './support/routing-fixture.js';
import { createKey, createTenant, type Tenant } from './support/harness.js';
import {
  freshReplicatedDatabase,
  READ_ADMIN_URL,
  replicaConnection,
  type ReplicatedDatabase,
} from './support/replica.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { onPostgres } from './support/test-database.js';
import { PERMISSIONS } from '../src/vocabulary/permissions.js';

/**
 * Long enough for a step's reads while the rest of the suite loads the machine (4 s was not, now
 * and then), short enough to wait out.
 */
const MAX_LAG_MS = 8_000;
const METRICS_TOKEN = 'replica-test-metrics-token';

async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  ms: number,
): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || performance.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.runIf(onPostgres && READ_ADMIN_URL)('list reads on a streaming replica', () => {
  let database: ReplicatedDatabase;
  let primaryUrl: string;
  let readUrl: string;
  let db: Db;
  let replicaControl: pg.Client;
  let acme: Tenant;
  let readerKey: string;
  let server: ServerProcess;

  // From a replica that has caught up (a test just after another's pause would otherwise start
  // with its coverage seconds old). A pause is a request: replay stops at its next record, so the
  // state is waited for.
  const pauseReplay = async () => {
    expect(
      (await until(served, ({ lagSeconds }) => lagSeconds < 0.5, 10_000)).lagSeconds,
    ).toBeLessThan(0.5);
    await replicaControl.query('SELECT pg_wal_replay_pause()');
    const state = () =>
      replicaControl
        .query<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state')
        .then(({ rows }) => rows[0]!.state);
    expect(await until(state, (now) => now === 'paused', 10_000)).toBe('paused');
  };
  const resumeReplay = () => replicaControl.query('SELECT pg_wal_replay_resume()');
  /** The reads the replica served, those the primary served for it, and its lag, from /metrics. */
  const served = async () => {
    const text = await (
      await fetch(`${server.baseUrl}/metrics`, {
        headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
      })
    ).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)![1]);
    return {
      replica: value('agentline_replica_reads_total'),
      behind: value('agentline_replica_behind_reads_total'),
      lagSeconds: value('agentline_replica_lag_seconds'),
    };
  };

  beforeAll(async () => {
    database = await freshReplicatedDatabase();
    ({ primaryUrl, readUrl } = database);
    db = createDb(primaryUrl);
    acme = await createTenant(db, 'Acme');
    readerKey = await createKey(db, acme.organizationId, PERMISSIONS);
    await insertTestEvents(db, [
      {
        organizationId: acme.organizationId,
        timestamp: '2026-06-01T00:00:00.000Z',
        type: 'before',
      },
    ]);
    replicaControl = await replicaConnection(readUrl);
    server = await startServerProcess({
      DATABASE_URL: primaryUrl,
      DATABASE_READ_URL: readUrl,
      REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      METRICS_TOKEN,
      // The smallest: a replay waits for its client after a few batches (the long replay below).
      EVENT_STREAM_BUFFER_BYTES: String(64 * 1024),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    });
  }, 60_000);

  // A test that fails while replay is paused must not leave the next one a stalled replica.
  afterEach(async () => {
    await replicaControl?.query('SELECT pg_wal_replay_resume()');
  });

  afterAll(async () => {
    await replicaControl?.query('SELECT pg_wal_replay_resume()').catch(() => {});
    await replicaControl?.end();
    await server?.stop();
    await db?.close();
    await database?.drop();
  });

  it('serves a list read from the replica only once it has every commit made before the read', async () => {
    const writer = createClient({ apiKey: acme.key, baseUrl: server.baseUrl });
    const reader = createClient({ apiKey: readerKey, baseUrl: server.baseUrl });
    const types = async () => (await reader.events.list()).items.map((event) => event.type);
    expect(await until(types, (seen) => seen.length === 1, 10_000)).toEqual(['before']);

    await pauseReplay();
    await insertTestEvents(db, [
      { organizationId: acme.organizationId, timestamp: '2026-06-01T00:00:01.000Z', type: 'after' },
    ]);
    const endpoint = await writer.webhooks.create({
      url: 'http://127.0.0.1:9/hook',
      message_types: ['event'],
    });
    const before = await served();
    // The replica has neither write: whoever made them, every key's lists are the primary's.
    expect((await writer.webhooks.list()).items.map(({ id }) => id)).toEqual([endpoint.id]);
    expect((await writer.events.list()).items.map((event) => event.type)).toEqual([
      'after',
      'before',
    ]);
    expect(await types()).toEqual(['after', 'before']);
    expect((await reader.webhooks.list({ limit: 50 })).items.map(({ id }) => id)).toEqual([
      endpoint.id,
    ]);
    const paused = await served();
    expect(paused.behind - before.behind).toBe(4);
    expect(paused.replica - before.replica).toBe(0);

    await resumeReplay();
    // Once it has replayed them, the replica serves them again.
    const fromReplica = await until(
      async () => ({ seen: await types(), replica: (await served()).replica }),
      ({ replica }) => replica > paused.replica,
      10_000,
    );
    expect(fromReplica.replica).toBeGreaterThan(paused.replica);
    expect(fromReplica.seen).toEqual(['after', 'before']);
  }, 60_000);

  it('reads a key its writes whichever process made them: 0 stale of 500', async () => {
    const globex = await createTenant(db, 'Globex');
    const fx = await loadRoutingFixture(db, globex.organizationId);
    const second = await startServerProcess({
      DATABASE_URL: primaryUrl,
      DATABASE_READ_URL: readUrl,
      METRICS_TOKEN,
    });
    try {
      const sides = [server, second].map((process) =>
        createClient({ apiKey: globex.key, baseUrl: process.baseUrl }),
      );
      let expected = (await sides[0]!.events.list({ limit: 1 })).total_count ?? 0;
      const stale: number[] = [];
      for (let attempt = 0; attempt < 500; attempt += 1) {
        // Routed through one process, read through the other, each way in turn.
        const [writesThrough, readsThrough] = attempt % 2 === 0 ? sides : [...sides].reverse();
        await writesThrough!.sessions.route(fx.targets.main, {});
        expected += 1;
        const seen = (await readsThrough!.events.list({ limit: 1 })).total_count;
        if (seen === null || seen === undefined || seen < expected) stale.push(attempt);
      }
      expect(stale).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 120_000);

  it('keeps a page under the version of the side that built it', async () => {
    const reader = createClient({ apiKey: readerKey, baseUrl: server.baseUrl });
    const prompt = (name: string) => ({
      name,
      llm_config: { model: 'gpt-4o', provider: 'openai' as const },
    });
    const names = async () => (await reader.prompts.list()).items.map((item) => item.name);
    await loadRecords(db, acme.organizationId, { prompts: [prompt('First')] });
    expect(await until(names, (seen) => seen.length === 1, 10_000)).toEqual(['First']);

    await pauseReplay();
    let paused: Awaited<ReturnType<typeof served>>;
    try {
      await loadRecords(db, acme.organizationId, { prompts: [prompt('Second')] });
      const before = await served();
      expect([...(await names())].sort()).toEqual(['First', 'Second']);
      paused = await served();
      expect(paused.behind - before.behind).toBe(1);
    } finally {
      await resumeReplay();
    }
    // The replica's page kept from before the pause is not the new records' page.
    const fromReplica = await until(
      async () => ({ seen: await names(), replica: (await served()).replica }),
      ({ replica }) => replica > paused.replica,
      10_000,
    );
    expect([...fromReplica.seen].sort()).toEqual(['First', 'Second']);
  }, 60_000);

  it('replays a stream whole from the primary while the replica is behind, then from it', async () => {
    await pauseReplay();
    try {
      await insertTestEvents(
        db,
        Array.from({ length: 5 }, (_, i) => ({
          organizationId: acme.organizationId,
          timestamp: `2026-06-01T00:01:0${i}.000Z`,
          type: 'streamed',
        })),
      );
      const before = await served();
      expect(await replayStreamed()).toEqual(STREAMED);
      expect((await served()).behind).toBeGreaterThan(before.behind);
    } finally {
      await resumeReplay();
    }
  }, 30_000);

  it('reads a long replay from the replica once it has what the replay runs to', async () => {
    // 15 MB of events: more than the server's stream buffer and the kernel's socket buffers on
    // loopback hold, so the replay has to wait for its client. The padding is in attributes,
    // which no index reads, so the insert stays quick.
    const LONG = 10_000;
    // In statements of 2,000: PostgreSQL binds at most 65,535 parameters to one.
    for (let start = 0; start < LONG; start += 2000) {
      await insertTestEvents(
        db,
        Array.from({ length: 2000 }, (_, i) => ({
          organizationId: acme.organizationId,
          timestamp: new Date(
            Date.parse('2026-06-02T00:00:00Z') + (start + i) * 1000,
          ).toISOString(),
          type: 'long',
          attributes: { i: start + i, padding: '.'.repeat(1500) },
        })),
      );
    }
    await until(served, ({ lagSeconds }) => lagSeconds < 0.5, 10_000);
    const before = await served();
    const reader = createClient({ apiKey: readerKey, baseUrl: server.baseUrl });
    const received: string[] = [];
    // The stream's end was read on the primary just before its first event was sent, so the
    // replica cannot have it yet: the first batches are the primary's. The client stops reading
    // until the replica has caught up past its first event; the replay, its buffers full, waits
    // too, and the batches it reads from then on are the replica's.
    let firstAt = 0;
    const caughtUpPastFirst = () =>
      until(served, ({ lagSeconds }) => lagSeconds * 1000 < performance.now() - firstAt, 10_000);
    for await (const event of reader.events.stream({
      start_datetime: '2026-06-02T00:00:00Z',
      search_fields: ['type'],
      search_field_values: ['long'],
    })) {
      received.push(event.timestamp);
      if (received.length === 1) {
        firstAt = performance.now();
        await caughtUpPastFirst();
      }
      if (received.length === LONG) break;
    }
    expect(received).toEqual([...received].sort());
    expect(new Set(received).size).toBe(LONG);
    const after = await served();
    expect(after.behind).toBeGreaterThan(before.behind);
    expect(after.replica).toBeGreaterThan(before.replica);
  }, 60_000);

  const STREAMED = Array.from({ length: 5 }, (_, i) => `2026-06-01T00:01:0${i}.000Z`);

  /** The timestamps of the five `streamed` events, replayed by a new stream of the reader. */
  async function replayStreamed(): Promise<string[]> {
    const reader = createClient({ apiKey: readerKey, baseUrl: server.baseUrl });
    const stream = reader.events.stream({
      start_datetime: '2026-06-01T00:01:00Z',
      search_fields: ['type'],
      search_field_values: ['streamed'],
    });
    const received: string[] = [];
    for await (const event of stream) {
      received.push(event.timestamp);
      if (received.length === STREAMED.length) break;
    }
    return received;
  }

  it('sends a list read to the side with fewer list reads in progress, the replica on a tie', async () => {
    const replica = new ReplicaReads(db as PostgresDb, primaryUrl, readUrl, {
      maxLagMs: MAX_LAG_MS,
      poolSize: 4,
    });
    await replica.start();
    try {
      await until(
        async () => replica.lagMs,
        (lag) => lag < MAX_LAG_MS / 2,
        10_000,
      );
      expect(replica.dbFor(0)).toBe(replica.view);
      const held = await replica.view.listPool.connect();
      try {
        expect(replica.dbFor(0)).toBe(db);
        // A key that wrote a moment ago reads the primary whatever is in progress.
        expect(replica.dbFor(performance.now() + MAX_LAG_MS)).toBe(db);
      } finally {
        held.release();
      }
      expect(replica.dbFor(0)).toBe(replica.view);
      const primaryHeld = await (db as PostgresDb).listPool.connect();
      try {
        expect(replica.dbFor(0)).toBe(replica.view);
      } finally {
        primaryHeld.release();
      }
      expect(replica.served).toEqual({ replica: 3, balanced: 1, behind: 1 });
    } finally {
      await replica.close();
    }
  }, 30_000);

  it('starts only on a standby of the primary', async () => {
    const notAStandby = new ReplicaReads(db as PostgresDb, primaryUrl, primaryUrl, {
      maxLagMs: MAX_LAG_MS,
      poolSize: 1,
    });
    await expect(notAStandby.start()).rejects.toThrow(/not a streaming replica of DATABASE_URL/);
    await notAStandby.close();
    await expect(
      startServerProcess({ DATABASE_URL: primaryUrl, DATABASE_READ_URL: primaryUrl }),
    ).rejects.toThrow(/could not start: DATABASE_READ_URL is not a streaming replica/);
  }, 30_000);
});
