// The events the benchmarks read: a deterministic stream per organization (sessions of about ten
// events, 20,000 users, a year of timestamps), written through the import's own batch insert.
// The day, shapes, tenants and deep-pages benchmarks build on it; the import's file is made of it.

import { createWriteStream } from 'node:fs';
import type { Db } from '../../apps/server/src/db/engine/client.js';
import { seeded, vacuumWhenSettled, type BenchDatabase } from './harness.js';
import { serverBuild } from '../../apps/server/test/support/server-build.js';
import { entryArgs } from '../../apps/server/test/support/server-process.js';
import {
  insertEventBatch,
  type EventToImport,
} from '../../apps/server/src/db/repositories/event-import.js';

const CATEGORIES = ['session', 'llm', 'tool', 'message', 'error', 'system'];
const TYPES_BY_CATEGORY: Record<string, string[]> = {
  session: ['session-started', 'session-ended', 'session-transferred'],
  llm: ['completion', 'completion-streamed', 'prompt-rendered'],
  tool: ['tool-call', 'tool-result', 'tool-error'],
  message: ['message-received', 'message-sent'],
  error: ['timeout', 'rate-limited'],
  system: ['deploy', 'config-changed'],
};
export const TOPICS = ['order', 'refund', 'delivery', 'password', 'invoice', 'warranty', 'upgrade'];

/** A deterministic event stream: ~10 events per session, 20,000 users, a year of timestamps. */
export function* generatedEvents(count: number, seed: number) {
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const start = Date.parse('2026-01-01T00:00:00.000Z');
  for (let i = 0; i < count; i += 1) {
    const session = Math.floor(i / 10);
    const category = CATEGORIES[Math.floor(random() * CATEGORIES.length)]!;
    const types = TYPES_BY_CATEGORY[category]!;
    const topic = TOPICS[Math.floor(random() * TOPICS.length)]!;
    yield {
      timestamp: new Date(start + Math.floor((i / count) * 365 * 86_400_000)).toISOString(),
      session_id: `s-${seed}-${session}`,
      conversation_id: `c-${seed}-${Math.floor(session / 2)}`,
      source: category === 'tool' ? 'tool' : 'router',
      source_id: String(Math.floor(random() * 50)),
      category,
      type: types[Math.floor(random() * types.length)]!,
      user_id: `+1415555${String(Math.floor(random() * 20_000)).padStart(4, '0')}`,
      description:
        random() < 0.05 ? null : `Caller asked about ${topic} #${Math.floor(random() * 100_000)}`,
      attributes: { agent_id: Math.floor(random() * 40), latency_ms: Math.floor(random() * 900) },
    };
  }
}

/** An NDJSON file of `lines` new events (random seed 7, so none is already in the database). */
export async function writeImportFile(file: string, lines: number): Promise<void> {
  const out = createWriteStream(file);
  for (const event of generatedEvents(lines, 7)) {
    if (!out.write(`${JSON.stringify(event)}\n`)) {
      await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
  }
  await new Promise((resolve) => out.end(resolve));
}

/**
 * Node's arguments for `agentline events import <file> --org <organization>`, run in apps/server:
 * the CLI of the server's bundle, as production runs it (test/support/server-build.ts).
 */
export async function importArguments(file: string, organization: string): Promise<string[]> {
  const cli = entryArgs('cli/main', await serverBuild());
  return [...cli, 'events', 'import', file, '--org', organization];
}

/** Events per batch insert while building. */
const BUILD_BLOCK = 10_000;

type GeneratedEvent = ReturnType<typeof generatedEvents> extends Generator<infer E> ? E : never;

/** A generated event as the import hands it over. */
function imported(event: GeneratedEvent, importKey: string): EventToImport {
  return {
    importKey,
    timestamp: event.timestamp,
    sessionId: event.session_id,
    conversationId: event.conversation_id,
    source: event.source,
    sourceId: event.source_id,
    category: event.category,
    type: event.type,
    userId: event.user_id,
    description: event.description,
    attributes: JSON.stringify(event.attributes),
  };
}

/**
 * Writes `perOrganization` events for each organization, interleaved in blocks, through the
 * import's own batch insert, and on PostgreSQL vacuums as autovacuum soon would.
 */
export async function buildEvents(
  db: Db,
  organizationIds: readonly number[],
  perOrganization: number,
): Promise<void> {
  const total = organizationIds.length * perOrganization;
  const buildStart = performance.now();
  const streams = organizationIds.map((id) => ({
    id,
    events: generatedEvents(perOrganization, id),
  }));
  let index = 0;
  for (let written = 0; written < perOrganization; written += BUILD_BLOCK) {
    for (const { id, events } of streams) {
      const batch: EventToImport[] = [];
      // next() rather than for-of: leaving a for-of loop would close the generator.
      for (let next = events.next(); !next.done; next = events.next()) {
        index += 1;
        batch.push(imported(next.value, `bench-${index}`));
        if (batch.length === BUILD_BLOCK) break;
      }
      await insertEventBatch(db, id, batch);
    }
    const built = (written + BUILD_BLOCK) * streams.length;
    if (built % 200_000 === 0) console.log(`built ${built} of ${total} events`);
  }
  const buildSeconds = (performance.now() - buildStart) / 1000;
  const upkeep = db.kind === 'sqlite' ? 'trigger and indexes' : 'indexes';
  console.log(
    `built ${total} events on ${db.kind} in ${buildSeconds.toFixed(1)} s (${Math.round(total / buildSeconds)} events/s, ${upkeep} included)`,
  );
  if (db.kind === 'postgres') {
    // Also the trigram index's pending list merged, and the hour counts' row versions that each
    // batch's update left behind.
    const vacuumStart = performance.now();
    await vacuumWhenSettled(db, 'events, event_counts');
    console.log(
      `VACUUM (ANALYZE) events, event_counts: ${((performance.now() - vacuumStart) / 1000).toFixed(1)} s`,
    );
  }
}

/** One organization made by `make` in a new database, with `count` generated events; settled. */
export async function organizationWithEvents<T extends { organizationId: number }>(
  database: BenchDatabase,
  count: number,
  make: (db: Db) => Promise<T>,
): Promise<T> {
  const made = await seeded(database.url, async (db) => {
    const organization = await make(db);
    await buildEvents(db, [organization.organizationId], count);
    return organization;
  });
  await database.settle();
  return made;
}
