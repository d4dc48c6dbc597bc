// The positions of webhook messages: an event's is its event stream resume token, unchanged; an
// experiment status change's is a token of the same form for its history id, which neither the
// stream nor another organization reads as its own.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { migrateDb } from '../src/db/migrate.js';
import { resumeTokensOf, type ResumeTokens } from '../src/runtime/resume-tokens.js';
import { freshDatabaseUrl } from './support/test-database.js';

let db: Db;
let tokens: ResumeTokens;

beforeAll(async () => {
  db = createDb(await freshDatabaseUrl());
  await migrateDb(db);
  tokens = resumeTokensOf(db);
  await tokens.ready();
});
afterAll(() => db.close());

describe('message positions', () => {
  it('keeps event tokens as they were and tells history tokens apart', () => {
    const [event] = tokens.make(3, [41]);
    expect(tokens.make(3, [41], 'event')).toEqual([event]);
    const [history] = tokens.make(3, [41], 'history');
    expect(history).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(history).not.toBe(event);
    expect(tokens.positionOf(3, event!)).toEqual({ kind: 'event', id: 41 });
    expect(tokens.positionOf(3, history!)).toEqual({ kind: 'history', id: 41 });
    // The stream resumes from event tokens only.
    expect(tokens.position(3, event!)).toBe(41);
    expect(tokens.position(3, history!)).toBeNull();
  });

  it("reads no other organization's tokens", () => {
    const [event] = tokens.make(3, [7]);
    const [history] = tokens.make(3, [7], 'history');
    expect(tokens.positionOf(4, event!)).toBeNull();
    expect(tokens.positionOf(4, history!)).toBeNull();
    expect(tokens.positionOf(3, 'not-a-token')).toBeNull();
  });
});
