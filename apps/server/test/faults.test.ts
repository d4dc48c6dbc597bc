// Faults under load, with the real server process: SIGTERM finishes what is in flight and loses
// no routed session nor its log line; SIGKILL leaves a consistent database (SQLite's WAL,
// PostgreSQL's commit) in which every acknowledged session is present and no session lacks its
// event.

import { once } from 'node:events';
import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { createTenant, type Schemas, type Tenant } from './support/harness.js';
import {
  experimentBody,
  loadRoutingFixture,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { startServerProcess } from './support/server-process.js';
import { freshDatabaseUrl, queryTestDb } from './support/test-database.js';

let databaseUrl: string;
let acme: Tenant;
let fx: RoutingFixture;

beforeEach(async () => {
  databaseUrl = await freshDatabaseUrl();
  const db = createDb(databaseUrl);
  await migrateDb(db);
  acme = await createTenant(db, 'Acme');
  fx = await loadRoutingFixture(db, acme.organizationId);
  await db.close();
});

const headers = () => ({ 'Service-API-Key': acme.key, 'Content-Type': 'application/json' });

async function startRunningExperiment(baseUrl: string) {
  const created = await fetch(`${baseUrl}/api/v1/experiments/`, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify(experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned])),
  }).then((r) => r.json() as Promise<Schemas['Experiment']>);
  const started = await fetch(`${baseUrl}/api/v1/experiments/${created.id}/start`, {
    method: 'POST',
    headers: headers(),
  });
  expect(started.status).toBe(200);
}

/**
 * Routes `n` sessions at once; resolves with the ids the server acknowledged (200).
 * `acknowledgedSoFar` lets the caller strike while answers are still arriving.
 */
async function routeConcurrently(
  baseUrl: string,
  n: number,
  acknowledgedSoFar: { count: number },
): Promise<{ acknowledged: string[] }> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: n }, (_, i) =>
      fetch(`${baseUrl}/api/v1/channels/targets/${fx.targets.main}/sessions`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({ user_id: `caller-${i}` }),
      }).then(async (r) => {
        const answer = { status: r.status, body: (await r.json()) as Schemas['RoutedSession'] };
        if (answer.status === 200) acknowledgedSoFar.count += 1;
        return answer;
      }),
    ),
  );
  const acknowledged = outcomes.flatMap((o) =>
    o.status === 'fulfilled' && o.value.status === 200 ? [o.value.body.session_id] : [],
  );
  return { acknowledged };
}

/** What the database holds after the server is gone, read through a new connection. */
async function inspect() {
  const db = createDb(databaseUrl);
  try {
    // SQLite checks its file; PostgreSQL's own recovery needs no check from us.
    const integrity =
      db.kind === 'sqlite' ? db.sqlite.pragma('integrity_check', { simple: true }) : 'ok';
    const sessions = await queryTestDb<{ id: string }>(db, sql`SELECT id FROM sessions`);
    const [started] = await queryTestDb<{ n: number }>(
      db,
      sql`SELECT count(*) AS n FROM events WHERE type = 'session-started'`,
    );
    return {
      integrity,
      sessionIds: new Set(sessions.map((row) => row.id)),
      startedEvents: Number(started!.n),
    };
  } finally {
    await db.close();
  }
}

describe('faults during session routing', () => {
  it('SIGTERM finishes in-flight requests and loses no acknowledged session', async () => {
    const server = await startServerProcess({ DATABASE_URL: databaseUrl });
    await startRunningExperiment(server.baseUrl);
    const progress = { count: 0 };
    const load = routeConcurrently(server.baseUrl, 400, progress);
    while (progress.count < 20) await new Promise((resolve) => setTimeout(resolve, 2));
    // Connections the server has accepted but not read a request from yet are closed (Node's
    // server.close); those callers get a connection error and nothing is stored for them.
    const stdoutClosed = once(server.child.stdout, 'close');
    const exitCode = server.stop('SIGTERM');
    const { acknowledged } = await load;
    expect(await exitCode).toBe(0);
    expect(acknowledged.length).toBeGreaterThan(0);
    // The log lines still waiting in the process's batch at exit were written too: one access
    // line per acknowledged session, and the last line says the server stopped.
    await stdoutClosed;
    const logLines = server.output
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { msg: string; path?: string; status?: number });
    const routedLines = logLines.filter(
      (line) => line.msg === 'request' && line.path?.endsWith('/sessions') && line.status === 200,
    );
    expect(routedLines.length).toBeGreaterThanOrEqual(acknowledged.length);
    expect(logLines.at(-1)).toMatchObject({ msg: 'stopped' });
    const after = await inspect();
    expect(after.integrity).toBe('ok');
    // Exactly the acknowledged sessions were stored: none lost, none stored unanswered.
    expect(after.sessionIds.size).toBe(acknowledged.length);
    for (const id of acknowledged) expect(after.sessionIds.has(id)).toBe(true);
    expect(after.startedEvents).toBe(after.sessionIds.size);
  }, 60_000);

  it('SIGKILL leaves a consistent database holding every acknowledged session', async () => {
    const server = await startServerProcess({ DATABASE_URL: databaseUrl });
    await startRunningExperiment(server.baseUrl);
    const progress = { count: 0 };
    const load = routeConcurrently(server.baseUrl, 600, progress);
    while (progress.count < 50) await new Promise((resolve) => setTimeout(resolve, 2));
    await server.stop('SIGKILL');
    const { acknowledged } = await load;
    const after = await inspect();
    expect(after.integrity).toBe('ok');
    for (const id of acknowledged) expect(after.sessionIds.has(id)).toBe(true);
    // A session and its event are written in one transaction: never one without the other.
    expect(after.startedEvents).toBe(after.sessionIds.size);

    // The restarted server serves the same data.
    const restarted = await startServerProcess({ DATABASE_URL: databaseUrl });
    try {
      const res = await fetch(
        `${restarted.baseUrl}/api/v1/events/?limit=0&search_fields=type&search_field_values=session-started`,
        {
          headers: headers(),
        },
      );
      expect(((await res.json()) as Schemas['EventListResponse']).total_count).toBe(
        after.startedEvents,
      );
    } finally {
      await restarted.stop();
    }
  }, 60_000);
});
