// The routing testbed as the experiment tests use it: requests to /api/v1/experiments as Acme,
// drafts in each state, and the check of one 422 problem.

import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { experiments } from '../../src/db/schema/sqlite.js';
import type { ApiResponse, Schemas } from './harness.js';
import { createRoutingTestbed, experimentBody, type RoutingTestbed } from './routing-fixture.js';
import { queryTestDb } from './test-database.js';

/**
 * Creates the testbed before the file's tests and hands it to `onReady`; closes it after them.
 * Each test ends with no running experiment, so one failing test cannot block the targets of the
 * next ones.
 */
export function useExperimentsTestbed(onReady: (testbed: RoutingTestbed) => void) {
  let testbed: RoutingTestbed | undefined;
  const current = (): RoutingTestbed => {
    if (!testbed) throw new Error('the experiments testbed is created in beforeAll');
    return testbed;
  };

  beforeAll(async () => {
    testbed = await createRoutingTestbed();
    onReady(testbed);
  });
  afterAll(() => testbed?.api.close());
  afterEach(async () => {
    await queryTestDb(
      current().api.db,
      sql`UPDATE ${experiments} SET status = 'stopped' WHERE ${experiments.status} = 'running'`,
    );
  });

  /** `T` is the body expected: an experiment, a page of them, or the error of a refusal. */
  const call = <T>(method: string, path: string, body?: unknown, key = current().acme.key) =>
    current().api.request<T>(method, `/api/v1/experiments/${path}`, { key, body });

  async function createDraft(
    overrides: Record<string, unknown> = {},
    targetId = current().fx.targets.second,
  ) {
    const { fx } = current();
    const res = await call<Schemas['Experiment']>(
      'POST',
      '',
      experimentBody(targetId, [fx.agents.pinned, fx.agents.alsoPinned], overrides),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  }

  async function createRunning(targetId: number) {
    const draft = await createDraft({}, targetId);
    expect((await call('POST', `${draft.id}/start`)).status).toBe(200);
    return draft;
  }

  async function createStopped(targetId: number) {
    const running = await createRunning(targetId);
    expect((await call('POST', `${running.id}/stop`)).status).toBe(200);
    return running;
  }

  return { call, createDraft, createRunning, createStopped };
}

export function expectProblem(
  res: ApiResponse<Schemas['HTTPValidationError']>,
  loc: unknown[],
  msgPart: string | RegExp,
  type?: string,
) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  const problem = res.body.detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(
    problem,
    `no problem at ${JSON.stringify(loc)} in ${JSON.stringify(res.body)}`,
  ).toBeDefined();
  expect(problem?.msg).toMatch(msgPart);
  if (type) expect(problem?.type).toBe(type);
}
