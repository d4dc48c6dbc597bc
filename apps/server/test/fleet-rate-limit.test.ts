// RATE_LIMIT_PER_MINUTE holds for every server process on one database together: one key's
// requests sent to two real server processes in turn, and to three behind HAProxy as
// deploy/haproxy.cfg deploys them (support/fleet.ts); count what the fleet answers, and see each
// answer's RateLimit fields count down the fleet's budget whichever process gives it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { leaseSize } from '../src/http/fleet-rate-limit.js';
import { haproxyInstalled, startFleet, type Fleet } from './support/fleet.js';
import { createKey, createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { createSharedTestDb, type SharedTestDb } from './support/test-database.js';

let database: SharedTestDb;
let databaseUrl: string;
let db: Db;
let acme: Tenant;

beforeAll(async () => {
  database = await createSharedTestDb();
  ({ databaseUrl, db } = database);
  acme = await createTenant(db, 'Acme');
});

afterAll(() => database?.close());

interface Answer {
  status: number;
  remaining: number;
  /** When the request was sent and when its answer had arrived (performance.now()). */
  sentAt: number;
  arrivedAt: number;
}

/** One request of `key` to `baseUrl`: its status and the `r` of its RateLimit field. */
async function ask(baseUrl: string, key: string): Promise<Answer> {
  const sentAt = performance.now();
  const response = await fetch(`${baseUrl}/api/v1/events/?limit=0`, {
    headers: { 'Service-API-Key': key },
  });
  await response.arrayBuffer();
  const fields = /r=(\d+)/.exec(response.headers.get('ratelimit') ?? '');
  return {
    status: response.status,
    remaining: Number(fields?.[1]),
    sentAt,
    arrivedAt: performance.now(),
  };
}

describe('a key’s rate limit across two server processes', () => {
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    servers.push(
      ...(await Promise.all(
        [0, 1].map(() =>
          startServerProcess({ DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '60' }),
        ),
      )),
    );
  }, 60_000);

  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  it('answers a budget of 60 a minute once for the fleet, not once per process', async () => {
    const key = await createKey(db, acme.organizationId, ['EVENTS_READ']);
    const started = performance.now();
    const answers: Answer[] = [];
    for (let i = 0; i < 200; i += 1) answers.push(await ask(servers[i % 2]!.baseUrl, key));
    const seconds = (performance.now() - started) / 1000;
    const answered = answers.filter(({ status }) => status === 200);
    expect(answers.every(({ status }) => status === 200 || status === 429)).toBe(true);
    // The budget, and what refilled (one a second) while the requests went.
    expect(answered.length).toBeGreaterThanOrEqual(60);
    expect(answered.length).toBeLessThanOrEqual(60 + Math.ceil(seconds));
    // A lease of one token: each answer counts the fleet's budget, one less each time (or the
    // same, when a token refilled in between), whichever process gives it.
    expect(answered[0]!.remaining).toBe(59);
    for (let i = 1; i < answered.length; i += 1) {
      expect(answered[i - 1]!.remaining - answered[i]!.remaining).toBeOneOf([0, 1]);
    }
    expect(answered.at(-1)!.remaining).toBe(0);
  }, 60_000);
});

describe.runIf(haproxyInstalled)('a key’s rate limit across three processes behind HAProxy', () => {
  const PER_MINUTE = 600;
  /** How long the key is held at three times its rate once its minute's budget is spent. */
  const SUSTAINED_SECONDS = 15;
  /** The most tokens a process leases at once at this budget. */
  const LEASE = leaseSize(PER_MINUTE);
  let fleet: Fleet;

  beforeAll(async () => {
    fleet = await startFleet(
      { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: String(PER_MINUTE) },
      { processes: 3 },
    );
  }, 120_000);

  afterAll(() => fleet?.stop());

  it('answers 600 a minute for the fleet, each answer telling the fleet’s budget', async () => {
    const key = await createKey(db, acme.organizationId, ['EVENTS_READ']);
    // The minute's budget first: as fast as three clients go, until refused.
    const burst: Answer[] = [];
    const burstStarted = performance.now();
    await Promise.all(
      [0, 1, 2].map(async () => {
        for (let refused = 0; refused < 5;) {
          const answer = await ask(fleet.baseUrl, key);
          burst.push(answer);
          refused = answer.status === 429 ? refused + 1 : 0;
        }
      }),
    );
    const burstAnswered = burst.filter(({ status }) => status === 200).length;
    const burstSeconds = (performance.now() - burstStarted) / 1000;
    expect(burstAnswered).toBeGreaterThanOrEqual(PER_MINUTE * 0.95);
    expect(burstAnswered).toBeLessThanOrEqual(PER_MINUTE + (burstSeconds * PER_MINUTE) / 60 + 1);
    // Then three times the rate: what is answered is what refills, 10 a second.
    const sustained: Answer[] = [];
    const started = performance.now();
    await Promise.all(
      [0, 1, 2].map(async (client) => {
        for (let i = 0; performance.now() - started < SUSTAINED_SECONDS * 1000; i += 1) {
          const due = started + (i * 3 + client) * (1000 / 30);
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
          sustained.push(await ask(fleet.baseUrl, key));
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const answered = sustained.filter(({ status }) => status === 200).length;
    const expected = (seconds * PER_MINUTE) / 60;
    console.info(
      `through HAProxy at ${PER_MINUTE}/min: ${burstAnswered} answered in the burst, then ${answered} of ${sustained.length} in ${seconds.toFixed(1)} s (the refill: ${expected.toFixed(0)})`,
    );
    expect(sustained.every(({ status }) => status === 200 || status === 429)).toBe(true);
    expect(answered).toBeGreaterThanOrEqual(expected * 0.95);
    expect(answered).toBeLessThanOrEqual(expected * 1.05);
    // Near the bottom a lease is one token: whichever process answers, `r` is the fleet's few,
    // and what refilled since an answer read before it. The fleet reads an answer's `r` between
    // its request's sending and its arrival, so one that arrived before this one was sent was
    // read at most (this arrival - its sending) earlier: on a CI machine running the whole suite
    // a process pauses for most of a second, and the tokens of that pause refill. After such a
    // pause a process may lease several of them; answering from those, it counts the bucket as
    // its lease left it, refilled since, while the others lease from it
    // (src/http/fleet-rate-limit.ts), so its `r` runs ahead of the fleet's by what they took
    // meanwhile; a lease's worth is allowed for that.
    // Each client waits for its answer before sending again, so all but each client's first
    // answer have one read before them.
    const inArrivalOrder = [...sustained].sort((a, b) => a.arrivedAt - b.arrivedAt);
    let bounded = 0;
    for (const answer of sustained) {
      const readBefore = inArrivalOrder.findLast(({ arrivedAt }) => arrivedAt <= answer.sentAt);
      if (!readBefore) continue;
      const refilled = Math.ceil(((answer.arrivedAt - readBefore.sentAt) / 60_000) * PER_MINUTE);
      expect(answer.remaining).toBeLessThanOrEqual(3 + LEASE + refilled);
      bounded += 1;
    }
    expect(bounded).toBeGreaterThanOrEqual(sustained.length - 3);
  }, 120_000);
});
