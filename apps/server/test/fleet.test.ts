// Three server processes on one PostgreSQL database behind HAProxy, configured as
// deploy/haproxy.cfg deploys them (support/fleet.ts): requests reach every process, an
// Idempotency-Key's answer is replayed by whichever process a retry reaches, an experiment's
// max_sessions holds with its sessions routed through all three, and a rolling restart under
// traffic costs a client of the SDK no request and its event stream no event.

import { createClient, type Event } from '@agentline/sdk';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import { haproxyInstalled, startFleet, type Fleet } from './support/fleet.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { freshDatabaseUrl, onPostgres, queryTestDb } from './support/test-database.js';

const METRICS_TOKEN = 'fleet-test-metrics-token';
const PROCESSES = 3;

if (onPostgres && !haproxyInstalled) {
  console.warn(
    '\nThe fleet tests are skipped: haproxy is not installed (apt-get install -y haproxy).\n',
  );
}

describe.runIf(onPostgres && haproxyInstalled)('three server processes behind HAProxy', () => {
  let db: Db;
  let acme: Tenant;
  let fx: RoutingFixture;
  let fleet: Fleet;

  beforeAll(async () => {
    const databaseUrl = await freshDatabaseUrl();
    db = createDb(databaseUrl);
    acme = await createTenant(db, 'Acme');
    fx = await loadRoutingFixture(db, acme.organizationId);
    fleet = await startFleet(
      { DATABASE_URL: databaseUrl, METRICS_TOKEN },
      { processes: PROCESSES },
    );
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    await db?.close();
  });

  /** Each process's count of one operation's answers with `status`, from its own /metrics. */
  const answeredByProcess = (operation: string, status = 200) =>
    Promise.all(
      fleet.servers.map(async (server) => {
        const text = await fetch(`${server.baseUrl}/metrics`, {
          headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
        }).then((response) => response.text());
        const line = new RegExp(
          `^agentline_http_requests_total\\{operation="${operation}",status="${status}"\\} (\\d+)$`,
          'm',
        ).exec(text);
        return Number(line?.[1] ?? 0);
      }),
    );
  const sinceBefore = (after: number[], before: number[]) => after.map((n, i) => n - before[i]!);

  const post = async <T>(path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${fleet.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'Service-API-Key': acme.key, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as T,
    };
  };

  const sessionsOf = async (condition: ReturnType<typeof sql>) => {
    const [row] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM sessions WHERE ${condition}`,
    );
    return Number(row!.n);
  };

  it('sends requests to every process in turn', async () => {
    const before = await answeredByProcess('keys_current');
    for (let i = 0; i < 30; i += 1) {
      const response = await fetch(`${fleet.baseUrl}/api/v1/keys/current`, {
        headers: { 'Service-API-Key': acme.key },
      });
      expect(response.status).toBe(200);
    }
    const answered = sinceBefore(await answeredByProcess('keys_current'), before);
    console.info(`keys_current answers per process: ${answered.join(', ')}`);
    expect(answered.reduce((sum, n) => sum + n, 0)).toBe(30);
    for (const n of answered) expect(n).toBeGreaterThan(0);
  });

  it("replays an Idempotency-Key's answer from whichever process a retry reaches", async () => {
    const path = `/api/v1/channels/targets/${fx.targets.main}/sessions`;
    const key = crypto.randomUUID();
    const before = await answeredByProcess('sessions_route');
    const answers = [];
    for (let i = 0; i < 9; i += 1) {
      answers.push(
        await post<Schemas['RoutedSession']>(
          path,
          { user_id: 'retrying-user' },
          { 'Idempotency-Key': key },
        ),
      );
    }
    const answered = sinceBefore(await answeredByProcess('sessions_route'), before);
    console.info(`one Idempotency-Key, answers per process: ${answered.join(', ')}`);
    for (const n of answered) expect(n).toBeGreaterThan(0);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(answers[0]!.body);
    }
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(8);
    expect(await sessionsOf(sql`user_id = 'retrying-user'`)).toBe(1);
  });

  it('stops an experiment at exactly max_sessions, its sessions routed through all three', async () => {
    const maxSessions = 300;
    const created = await post<Schemas['Experiment']>(
      '/api/v1/experiments/',
      experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned], {
        max_sessions: maxSessions,
      }),
    );
    expect(created.status).toBe(200);
    const id = created.body.id;
    expect((await post(`/api/v1/experiments/${id}/start`, {})).status).toBe(200);

    // 12 connections, each routing one session after another: more sessions than the cap, so
    // the last allowed one races with many more, on all three processes.
    const before = await answeredByProcess('sessions_route');
    const connections = Array.from({ length: 12 }, async (_, c) => {
      const experimentsOfAnswers: Array<number | null> = [];
      for (let i = 0; i < 40; i += 1) {
        const routed = await post<Schemas['RoutedSession']>(
          `/api/v1/channels/targets/${fx.targets.second}/sessions`,
          { user_id: `capped-${c}-${i}` },
        );
        expect(routed.status, JSON.stringify(routed.body)).toBe(200);
        experimentsOfAnswers.push(routed.body.experiment_id);
      }
      return experimentsOfAnswers;
    });
    const answers = (await Promise.all(connections)).flat();
    const answered = sinceBefore(await answeredByProcess('sessions_route'), before);
    console.info(`480 sessions routed, per process: ${answered.join(', ')}`);
    for (const n of answered) expect(n).toBeGreaterThan(0);
    expect(answers.filter((experiment) => experiment === id)).toHaveLength(maxSessions);
    expect(await sessionsOf(sql`experiment_id = ${id}`)).toBe(maxSessions);
    const record = await fetch(`${fleet.baseUrl}/api/v1/experiments/${id}`, {
      headers: { 'Service-API-Key': acme.key },
    }).then((response) => response.json() as Promise<Schemas['Experiment']>);
    expect(record).toMatchObject({ status: 'stopped', ended_reason: 'max_sessions' });
  }, 120_000);

  it('restarts every process, one at a time, losing no request and no streamed event', async () => {
    // The SDK as a user has it: its default retries (2, for 5xx and network errors, a POST under
    // its Idempotency-Key). Every attempt is counted, to tell how many were retries.
    let sessionAttempts = 0;
    const client = createClient({
      apiKey: acme.key,
      baseUrl: fleet.baseUrl,
      fetch: (input, init) => {
        if (init?.method === 'POST') sessionAttempts += 1;
        return fetch(input, init);
      },
    });
    const stop = new AbortController();
    const streamed: Event[] = [];
    const stream = client.events.stream(
      { search_fields: ['type'], search_field_values: ['session-started'] },
      { signal: stop.signal },
    );
    const reading = (async () => {
      for await (const event of stream) streamed.push(event);
    })();
    const streamedSessions = () => new Set(streamed.map((event) => event.session_id));
    const waitForStreamed = async (sessionIds: string[], ms: number) => {
      const deadline = performance.now() + ms;
      while (performance.now() < deadline) {
        const seen = streamedSessions();
        if (sessionIds.every((id) => seen.has(id))) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    // The stream is open once it has the event of a session routed after it: a session routed
    // while its request was still on the way is before its start, so route until one arrives.
    const opened = performance.now();
    let openingRoutes = 0;
    while (streamed.length === 0 && performance.now() - opened < 60_000) {
      await client.sessions.route(fx.targets.main, { user_id: 'before-restart' });
      openingRoutes += 1;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(streamed.length).toBeGreaterThan(0);

    const routed: string[] = [];
    const failures: unknown[] = [];
    let routing = true;
    const routers = Array.from({ length: 4 }, async (_, r) => {
      for (let i = 0; routing; i += 1) {
        try {
          const session = await client.sessions.route(fx.targets.main, { user_id: `u-${r}-${i}` });
          routed.push(session.session_id);
        } catch (error) {
          failures.push(error);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const oldServers = [...fleet.servers];
    const started = performance.now();
    const exitCodes = await fleet.rollingRestart(2_000);
    const restartSeconds = (performance.now() - started) / 1000;
    // A moment of routing on the restarted processes, then stop.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    routing = false;
    await Promise.all(routers);
    const callsMade = routed.length + failures.length;

    await waitForStreamed(routed, 30_000);
    stop.abort();
    await reading;
    const streamedIds = streamed.map((event) => event.session_id);
    const lost = routed.filter((id) => !streamedIds.includes(id));
    // How many streams each old process ended at its SIGTERM (its log line).
    const streamsEnded = oldServers.map((server) => {
      const line = server.output.find((l) => l.includes('closing event streams'));
      return line ? (JSON.parse(line) as { streams: number }).streams : 0;
    });
    console.info(
      `rolling restart of ${PROCESSES} processes in ${restartSeconds.toFixed(1)} s: ` +
        `${callsMade} sessions routed, ${failures.length} failed, ` +
        `${sessionAttempts - openingRoutes - callsMade} SDK retries; ${streamed.length} events streamed, ` +
        `${lost.length} lost; streams ended per process at SIGTERM: ${streamsEnded.join(', ')}`,
    );
    expect(exitCodes).toEqual([0, 0, 0]);
    expect(failures).toEqual([]);
    expect(lost).toEqual([]);
    // Exactly once: a resumed stream repeats nothing.
    expect(new Set(streamedIds).size).toBe(streamedIds.length);
    const routedIds = new Set(routed);
    expect(streamedIds.filter((id) => id && routedIds.has(id))).toHaveLength(routed.length);
    // The stream was open on one of them when it stopped, and resumed on another.
    expect(streamsEnded.reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
  }, 180_000);
});
