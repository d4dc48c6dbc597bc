// agentline events tail: follows what any writer commits, filtered as the API filters, and stops
// on its signal with a position that continues without skipping or repeating.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';
import { insertTestEvents } from './support/test-database.js';

let workspace: TempWorkspace;
let db: Db;
let organizationId: number;

beforeAll(async () => {
  workspace = await createWorkspace();
  expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
  db = createDb(workspace.databaseUrl);
  organizationId = 1;
});

afterAll(async () => {
  await db.close();
  workspace.remove();
});

const write = (types: string[], category = 'session') =>
  insertTestEvents(
    db,
    types.map((type) => ({
      organizationId,
      timestamp: '2026-05-01T00:00:00.000Z',
      category,
      type,
      sessionId: `s-${type}`,
    })),
  );

/** Runs the tail until `whileRunning` has finished and a little after, then interrupts it. */
async function tail(argv: string[], whileRunning: () => Promise<void>) {
  const stop = new AbortController();
  const running = workspace.run(['events', 'tail', '--org', 'Acme', ...argv], {
    signal: stop.signal,
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await whileRunning();
  await new Promise((resolve) => setTimeout(resolve, 800));
  stop.abort();
  return running;
}

describe('agentline events tail', () => {
  it('prints matching events as they are committed, and where it stopped', async () => {
    await write(['before']);
    const result = await tail(['--search', 'type=started'], async () => {
      await write(['call-started', 'call-ended', 'chat-started']);
    });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('session/call-started');
    expect(lines[0]).toContain('session=s-call-started');
    expect(lines[1]).toContain('session/chat-started');
    expect(result.stderr).toMatch(/following the events of "Acme" from now/);
    expect(result.stderr).toMatch(/stopped at position \d+; continue with --after \d+/);
  });

  it('replays from --start as JSON, and --after continues with nothing skipped', async () => {
    const first = await tail(
      ['--start', '2026-05-01T00:00:00Z', '--json', '--fields', 'type'],
      () => write(['live-1']),
    );
    const events = first.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.map((event) => event['type'])).toEqual([
      'before',
      'call-started',
      'call-ended',
      'chat-started',
      'live-1',
    ]);
    expect(Object.keys(events[0]!).sort()).toEqual(['timestamp', 'type']);
    const position = /continue with --after (\d+)/.exec(first.stderr)![1]!;
    await write(['while-stopped']);
    const second = await tail(['--after', position, '--json'], () => write(['live-2']));
    expect(
      second.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type),
    ).toEqual(['while-stopped', 'live-2']);
  });

  it('names what is wrong with an option', async () => {
    const result = await workspace.run(['events', 'tail', '--org', 'Acme', '--search', 'type']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--search "type" is not <property>=<value>');
    const badStart = await workspace.run(['events', 'tail', '--org', 'Acme', '--start', 'soon']);
    expect(badStart.code).toBe(2);
    expect(badStart.stderr).toContain('"soon" is not an ISO 8601 date-time');
  });
});
