// Kept list answers check every request against a version read after it arrived: the requests of
// one organization arriving in one turn of the event loop share one read, and a request arriving
// while a read is in flight waits for the next one, so it never takes a version read before it
// came. A list of its own here (the events and prompts lists are tested in
// events-answer-cache.test.ts and prompts-cache.test.ts), with the version read counted and held.

import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { cursorSigner } from '../src/runtime/cursor-signer.js';
import { jsonText } from '../src/vocabulary/json-text.js';
import type { AppEnv, AuthContext } from '../src/http/app-env.js';
import { jsonTextResponse } from '../src/http/versioned-cache.js';
import { KeptAnswers } from '../src/runtime/kept-answers.js';
import { KeptListAnswers } from '../src/http/versioned-cache.js';
import { createTestDb } from './support/test-database.js';

interface Page {
  built_at_version: number;
}

let db: Db;
beforeAll(async () => {
  db = await createTestDb();
});
afterAll(() => db.close());

/** A list whose answer names the version it was built at, and what its version reads saw. */
function keptList() {
  const versions = new Map<number, number>([
    [1, 1],
    [2, 1],
  ]);
  const reads: number[] = [];
  let hold: Promise<void> | undefined;
  let failure: Error | undefined;
  let builds = 0;
  const kept = new KeptListAnswers<Page>(
    // A list taking one parameter; the organization comes in one the route does not declare.
    { operationId: 'test_list', request: { query: { shape: { limit: {} } } } },
    async (_db, organizationId) => {
      reads.push(organizationId);
      if (failure) throw failure;
      // The version as it is when the read starts, returned once the test lets it finish.
      const version = versions.get(organizationId)!;
      await hold;
      return version;
    },
    { keepsCursorPages: false },
  );
  const app = new Hono<AppEnv>();
  const answers = new KeptAnswers({ maxBytes: 1024 * 1024 });
  app.use(async (c, next) => {
    c.set('db', db);
    c.set('keptAnswers', answers);
    c.set('auth', {
      organizationId: Number(c.req.query('organization')),
    } as AuthContext);
    await next();
  });
  app.get('/list', kept.serve, async (c) => {
    builds += 1;
    const version = versions.get(c.get('auth').organizationId)!;
    const json = jsonText<Page>({ built_at_version: version });
    kept.keep(c, await cursorSigner(db), version, json);
    return jsonTextResponse(c, json);
  });
  app.onError((error, c) => c.json({ detail: error.message }, 503));
  const request = (organization = 1) => app.request(`/list?organization=${organization}`);
  const get = async (organization = 1): Promise<Page> => {
    const response = await request(organization);
    expect(response.status).toBe(200);
    return (await response.json()) as Page;
  };
  return {
    request,
    get,
    reads,
    builds: () => builds,
    /** The database fails every version read from now on. */
    failReads: (error: Error) => (failure = error),
    /** Another process's write: the organization's version moves on. */
    write: (organization = 1) => versions.set(organization, versions.get(organization)! + 1),
    /** Holds version reads until the returned function is called. */
    holdReads: () => {
      let release!: () => void;
      hold = new Promise((resolve) => (release = resolve));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

describe('kept list answers', () => {
  it('reads the version once for the requests of an organization arriving together', async () => {
    const list = keptList();
    await list.get();
    expect([list.reads.length, list.builds()]).toEqual([1, 1]);
    const pages = await Promise.all(Array.from({ length: 8 }, () => list.get()));
    expect(pages).toEqual(Array.from({ length: 8 }, () => ({ built_at_version: 1 })));
    // Eight kept answers, checked against one read.
    expect([list.reads.length, list.builds()]).toEqual([2, 1]);
  });

  it('reads each organization apart', async () => {
    const list = keptList();
    await Promise.all([list.get(1), list.get(2), list.get(1), list.get(2)]);
    expect(list.reads.toSorted()).toEqual([1, 2]);
  });

  it('makes a request arriving while the version is read wait for a read after it', async () => {
    const list = keptList();
    await list.get();
    const release = list.holdReads();
    const before = list.get();
    // Once the first request's read has started, another process writes and a request arrives.
    await vi.waitFor(() => expect(list.reads).toHaveLength(2));
    list.write();
    const after = list.get();
    // It waits for the read in flight to end rather than share it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(list.reads).toHaveLength(2);
    release();
    // The first request came before the write and may be answered without it; the second came
    // after it, so its answer is built at the new version, not taken from the read in flight.
    expect(await before).toEqual({ built_at_version: 1 });
    expect(await after).toEqual({ built_at_version: 2 });
    expect(list.reads).toHaveLength(3);
    expect(list.builds()).toBe(2);
  });

  it('answers every request with the error when the version cannot be read', async () => {
    const list = keptList();
    await list.get();
    list.failReads(new Error('the database went away'));
    const answers = await Promise.all([list.request(), list.request()]);
    expect(answers.map((a) => a.status)).toEqual([503, 503]);
    expect(await answers[0].json()).toEqual({ detail: 'the database went away' });
    // One read failed, for both requests.
    expect(list.reads).toHaveLength(2);
  });
});
