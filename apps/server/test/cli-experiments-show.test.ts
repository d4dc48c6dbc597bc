// agentline experiments show: an experiment with its variants' weight, sessions and share, and
// its change history, as a table or as the API's JSON.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, RECORDS_EXAMPLE, type TempWorkspace } from './fixtures/cli-harness.js';
import type { Schemas } from './support/harness.js';

let workspace: TempWorkspace;

beforeAll(async () => {
  workspace = await createWorkspace();
  expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
  expect((await workspace.run(['org', 'create', 'Globex'])).code).toBe(0);
  expect((await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Acme'])).code).toBe(0);
});

afterAll(() => workspace.remove());

interface Shown {
  experiment: Schemas['Experiment'];
  results: Schemas['ExperimentResults'];
  history: Array<Schemas['ExperimentChange']>;
}

describe('agentline experiments show', () => {
  it('prints the experiment, its results and its history as the API answers them', async () => {
    const result = await workspace.run(['experiments', 'show', '1', '--org', 'Acme', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const shown = JSON.parse(result.stdout) as Shown;
    expect(shown.experiment).toMatchObject({ id: 1, name: 'Concise answers', status: 'draft' });
    expect(shown.results).toMatchObject({ experiment_id: 1, total_sessions: 0 });
    expect(shown.results.variants.map((v) => [v.name, v.weight, v.is_control, v.share])).toEqual([
      ['Current', 50, true, 0],
      ['Concise', 50, false, 0],
    ]);
    expect(shown.history.map((c) => [c.action, c.actor])).toEqual([
      ['created', { type: 'operator' }],
    ]);
  });

  it('prints a table of variants and one of changes', async () => {
    const result = await workspace.run(['experiments', 'show', '1', '--org', 'Acme']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('Experiment 1 "Concise answers": draft');
    const variants = lines.filter((line) => /^\d+ {2,}/.test(line)).map((l) => l.split(/ {2,}/));
    expect(variants).toEqual([
      ['1', 'Current (control)', 'Order agent', '50%', '0', '0.0%'],
      ['2', 'Concise', 'Concise order agent', '50%', '0', '0.0%'],
    ]);
    const created = lines.find((line) => / {2,}created {2,}/.test(line))!.split(/ {2,}/);
    expect(created.slice(1, 3)).toEqual(['created', 'operator']);
    expect(created[3]).toContain('name: null -> "Concise answers"');
  });

  it("refuses another organization's experiment and an id that is not one", async () => {
    const foreign = await workspace.run(['experiments', 'show', '1', '--org', 'Globex']);
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toContain('organization "Globex" has no experiment 1');
    const bad = await workspace.run(['experiments', 'show', 'first', '--org', 'Acme']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('the experiment id must be a whole number from 1, got "first"');
  });
});
