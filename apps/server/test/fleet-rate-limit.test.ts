// RATE_LIMIT_PER_MINUTE holds for every server process on one database together: two real server
// processes, one key's requests sent to them in turn, count what the fleet answers, and each
// answer's RateLimit fields count down the fleet's budget whichever process gives it.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/engine/migrate.js';
import { createKey, createTenant, type Tenant } from './support/harness.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { freshDatabaseUrl } from './support/test-database.js';

let db: Db;
let acme: Tenant;
const servers: ServerProcess[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabaseUrl();
  db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  servers.push(
    ...(await Promise.all(
      [60, 60, 600, 600].map((perMinute) =>
        startServerProcess({ DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: String(perMinute) }),
      ),
    )),
  );
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  await db?.close();
});

interface Answer {
  status: number;
  remaining: number;
}

/** `count` requests of a new key, to the two processes in turn; the answers and their seconds. */
async function sendInTurn(pair: ServerProcess[], count: number) {
  const key = await createKey(db, acme.organizationId, ['EVENTS_READ']);
  const answers: Answer[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const response = await fetch(`${pair[i % 2]!.baseUrl}/api/v1/events/?limit=0`, {
      headers: { 'Service-API-Key': key },
    });
    await response.arrayBuffer();
    const fields = /r=(\d+)/.exec(response.headers.get('ratelimit') ?? '');
    answers.push({ status: response.status, remaining: Number(fields?.[1]) });
  }
  return { answers, seconds: (performance.now() - started) / 1000 };
}

describe('a key’s rate limit across server processes', () => {
  it('answers a budget of 60 a minute once for the fleet, not once per process', async () => {
    const { answers, seconds } = await sendInTurn(servers.slice(0, 2), 200);
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

  it('answers a budget of 600 a minute within a lease per process of it', async () => {
    const { answers, seconds } = await sendInTurn(servers.slice(2, 4), 800);
    const answered = answers.filter(({ status }) => status === 200).length;
    // Each process leases 6 at a time: unspent leases are what the fleet may answer less.
    expect(answered).toBeGreaterThanOrEqual(600 - 2 * 6);
    expect(answered).toBeLessThanOrEqual(600 + Math.ceil(seconds * 10));
    // Both processes' fields tell the same budget, as of their last lease: they differ by what
    // the other leased since, with requests in turn at most two leases.
    for (let i = 1; i < 400; i += 1) {
      expect(Math.abs(answers[i]!.remaining - answers[i - 1]!.remaining)).toBeLessThanOrEqual(12);
    }
  }, 60_000);
});
