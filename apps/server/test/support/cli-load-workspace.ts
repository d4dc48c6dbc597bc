// A CLI workspace with the organizations Acme (id 1) and Globex (id 2), and reads of its
// database, for the tests of `agentline load` and `agentline list`.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDb, type Db } from '../../src/db/engine/client.js';
import { createWorkspace, type TempWorkspace } from '../fixtures/cli-harness.js';
import { queryTestDb } from './test-database.js';

const RECORD_TABLES = [
  'services',
  'tools',
  'prompts',
  'prompt_tools',
  'agents',
  'channels',
  'channel_targets',
  'telephony_numbers',
  'messaging_services',
  'messaging_service_numbers',
  'a2p_brands',
  'a2p_campaigns',
  'experiments',
  'experiment_variants',
] as const;

/** Rows of raw SQL; booleans read as 0 and 1 on both backends, as SQLite stores them. */
export async function rowsOf(db: Db, text: string): Promise<Array<Record<string, unknown>>> {
  const rows = await queryTestDb(db, sql.raw(text));
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'boolean' ? Number(value) : value,
      ]),
    ),
  );
}

/** A table's lines split into cells: cells hold single spaces, columns are two or more apart. */
export function cellsOf(lines: string[]): string[][] {
  return lines.map((line) => line.split(/\s{2,}/));
}

/**
 * Creates the workspace and its two organizations before the file's tests, hands it to `onReady`
 * (which may load records into it), and removes it after them.
 */
export function useLoadWorkspace(onReady: (workspace: TempWorkspace) => Promise<void> | void) {
  let workspace: TempWorkspace | undefined;
  const current = (): TempWorkspace => {
    if (!workspace) throw new Error('the load workspace is created in beforeAll');
    return workspace;
  };

  beforeAll(async () => {
    workspace = await createWorkspace();
    expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
    expect((await workspace.run(['org', 'create', 'Globex'])).code).toBe(0);
    await onReady(workspace);
  });
  afterAll(() => workspace?.remove());

  async function withWorkspaceDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
    const db = createDb(current().databaseUrl);
    try {
      return await work(db);
    } finally {
      await db.close();
    }
  }

  function query(text: string): Promise<unknown[]> {
    return withWorkspaceDb((db) => rowsOf(db, text));
  }

  async function channelIdsByName(): Promise<Record<string, number>> {
    const rows = (await query(
      'SELECT name, id FROM channels WHERE organization_id = 1 ORDER BY id',
    )) as Array<{ name: string; id: number }>;
    return Object.fromEntries(rows.map((row) => [row.name, row.id]));
  }

  function tableCounts(): Promise<Record<string, number>> {
    return withWorkspaceDb(async (db) => {
      const counts: Record<string, number> = {};
      for (const table of RECORD_TABLES) {
        const [row] = await rowsOf(db, `SELECT count(*) AS n FROM ${table}`);
        counts[table] = row!.n as number;
      }
      return counts;
    });
  }

  function writeRecords(name: string, content: unknown): string {
    const path = join(current().dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return path;
  }

  return { withWorkspaceDb, query, channelIdsByName, tableCounts, writeRecords };
}
