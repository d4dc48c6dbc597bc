// `agentline events import` killed with SIGKILL in the middle of a file, then run again: every
// event of the file is stored exactly once, and the description index still matches the events.

import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb } from '../src/db/client.js';
import { createWorkspace, type TempWorkspace } from './fixtures/cli-harness.js';

const SERVER_DIR = fileURLToPath(new URL('..', import.meta.url));
const LINES = 60_000;
const BATCH = 1_000;

let workspace: TempWorkspace;
let file: string;

beforeAll(async () => {
  workspace = createWorkspace();
  expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
  file = join(workspace.dir, 'events.ndjson');
  const out = createWriteStream(file);
  for (let i = 0; i < LINES; i += 1) {
    // Half bring an id, half are identified by their content, so both kinds of key must resume.
    const event = {
      ...(i % 2 === 0 ? { id: `e-${i}` } : {}),
      timestamp: new Date(Date.UTC(2026, 4, 1) + i * 1000).toISOString(),
      session_id: `s-${Math.floor(i / 10)}`,
      category: 'tool',
      type: 'tool-call',
      description: i % 20 === 0 ? null : `Looked up order ${i}`,
    };
    out.write(`${JSON.stringify(event)}\n`);
  }
  await new Promise((resolve) => out.end(resolve));
});

afterAll(() => workspace.remove());

function startImport() {
  return spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/cli/main.ts',
      'events',
      'import',
      file,
      '--org',
      'Acme',
      '--batch-size',
      String(BATCH),
    ],
    { cwd: SERVER_DIR, env: { PATH: process.env.PATH, DATABASE_URL: workspace.databasePath } },
  );
}

function stored(): { events: number; keys: number } {
  const db = createDb(workspace.databasePath);
  try {
    return db.sqlite
      .prepare('SELECT count(*) AS events, count(DISTINCT import_key) AS keys FROM events')
      .get() as { events: number; keys: number };
  } finally {
    db.close();
  }
}

it('stores every event exactly once after a SIGKILL and a re-run', async () => {
  const killed = startImport();
  const exited = new Promise((resolve) => killed.once('exit', resolve));
  // Killed once a few batches are committed, well before the end of the file.
  while (stored().events < 5 * BATCH) {
    if (killed.exitCode !== null) throw new Error('the import ended before it could be killed');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  killed.kill('SIGKILL');
  await exited;
  const atKill = stored();
  expect(atKill.events).toBeLessThan(LINES);
  expect(atKill.events % BATCH).toBe(0);

  const rerun = startImport();
  let stdout = '';
  rerun.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise((resolve) => rerun.once('exit', resolve));
  expect(code).toBe(0);
  expect(stdout).toContain(
    `imported ${(LINES - atKill.events).toLocaleString('en-US')} events, skipped ${atKill.events.toLocaleString('en-US')} duplicates`,
  );
  expect(stored()).toEqual({ events: LINES, keys: LINES });

  const db = createDb(workspace.databasePath);
  try {
    db.sqlite.exec(
      `INSERT INTO events_description_fts (events_description_fts, rank) VALUES ('integrity-check', 1)`,
    );
  } finally {
    db.close();
  }
}, 120_000);
