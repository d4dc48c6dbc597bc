// agentline load: platform records from a JSON file, written, then updated in place on a second
// load, kept apart per organization.

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { RECORDS_EXAMPLE, type TempWorkspace } from './fixtures/cli-harness.js';
import { cellsOf, rowsOf, useLoadWorkspace } from './support/cli-load-workspace.js';
import { queryTestDb } from './support/test-database.js';

let workspace: TempWorkspace;

const { withWorkspaceDb, query, tableCounts, writeRecords } = useLoadWorkspace((created) => {
  workspace = created;
});

interface LoadedRecordRow {
  section: string;
  key: string;
  id: number | null;
}

// What a load of the example file into Acme (organization 1) names, as the database has it: each
// section's rows in the order the file lists them, keyed as the load output keys them.
const LOADED_RECORD_QUERIES: ReadonlyArray<[section: string, query: string]> = [
  ['services', 'SELECT name AS key, id FROM services WHERE organization_id = 1 ORDER BY id'],
  ['tools', 'SELECT name AS key, id FROM tools WHERE organization_id = 1 ORDER BY id'],
  ['prompts', 'SELECT name AS key, id FROM prompts WHERE organization_id = 1 ORDER BY id'],
  ['agents', 'SELECT name AS key, id FROM agents WHERE organization_id = 1 ORDER BY id'],
  ['channels', 'SELECT name AS key, id FROM channels WHERE organization_id = 1 ORDER BY id'],
  [
    'channel_targets',
    `SELECT c.name || ' ' || t.target_mode || ' ' || t.target AS key, t.id FROM channel_targets t
     JOIN channels c ON c.id = t.channel_id WHERE t.organization_id = 1 ORDER BY t.id`,
  ],
  [
    'telephony_numbers',
    `SELECT c.name || ' ' || n.phone_number AS key, n.id FROM telephony_numbers n
     JOIN channels c ON c.id = n.channel_id WHERE n.organization_id = 1 ORDER BY n.id`,
  ],
  [
    'messaging_services',
    'SELECT sid AS key, id FROM messaging_services WHERE organization_id = 1 ORDER BY id',
  ],
  [
    // The table has no id column: a number is known by its service and itself.
    'messaging_service_numbers',
    `SELECT s.sid || ' ' || n.phone_number AS key, NULL AS id FROM messaging_service_numbers n
     JOIN messaging_services s ON s.id = n.messaging_service_id
     WHERE n.organization_id = 1 ORDER BY s.id, n.phone_number`,
  ],
  ['a2p_brands', 'SELECT sid AS key, id FROM a2p_brands WHERE organization_id = 1 ORDER BY id'],
  [
    'a2p_campaigns',
    'SELECT sid AS key, id FROM a2p_campaigns WHERE organization_id = 1 ORDER BY id',
  ],
  ['experiments', 'SELECT name AS key, id FROM experiments WHERE organization_id = 1 ORDER BY id'],
];

function exampleRecordsInDb(): Promise<LoadedRecordRow[]> {
  return withWorkspaceDb(async (db) => {
    const records: LoadedRecordRow[] = [];
    for (const [section, text] of LOADED_RECORD_QUERIES) {
      for (const row of await rowsOf(db, text)) {
        records.push({ section, key: row.key as string, id: row.id as number | null });
      }
    }
    return records;
  });
}

/** The table `agentline load` prints, then its summary line. */
function loadOutput(stdout: string): { rows: string[][]; summary: string } {
  const lines = stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^SECTION\s+KEY\s+ID\s+ACTION$/);
  return { rows: cellsOf(lines.slice(1, -1)), summary: lines.at(-1)! };
}

function asTableRows(records: LoadedRecordRow[], action: string): string[][] {
  return records.map(({ section, key, id }) => [
    section,
    key,
    id === null ? '-' : String(id),
    action,
  ]);
}

describe('loading the example file', () => {
  it('writes every record and lists each with its id, then the counts', async () => {
    const result = await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Acme']);
    expect(result.stderr).toBe(
      'to list the ids again: agentline list agents|channels|targets|numbers --org 1\n',
    );
    expect(result.code).toBe(0);
    const { rows, summary } = loadOutput(result.stdout);
    expect(summary).toContain('into organization "Acme" (id 1)');
    expect(summary).toContain('prompts 3 new');
    expect(summary).toContain('channel targets 5 new; telephony numbers 4 new');
    expect(await tableCounts()).toEqual({
      services: 2,
      tools: 3,
      prompts: 3,
      prompt_tools: 5,
      agents: 4,
      channels: 3,
      channel_targets: 5,
      telephony_numbers: 4,
      messaging_services: 2,
      messaging_service_numbers: 2,
      a2p_brands: 2,
      a2p_campaigns: 2,
      experiments: 1,
      experiment_variants: 2,
    });
    const inDb = await exampleRecordsInDb();
    expect(inDb).toHaveLength(33);
    expect(rows).toEqual(asTableRows(inDb, 'created'));
    expect(rows.map(([, key]) => key)).toContain('Customer line test agent-test');
  });

  it('resolves names to the rows just written', async () => {
    expect(
      await query(`SELECT p.name, t.name AS tool FROM prompt_tools pt
             JOIN prompts p ON p.id = pt.prompt_id JOIN tools t ON t.id = pt.tool_id
             WHERE p.name = 'Order status' ORDER BY t.id`),
    ).toEqual([
      { name: 'Order status', tool: 'lookup_order' },
      { name: 'Order status', tool: 'hang_up' },
    ]);
    expect(
      await query(`SELECT a.name, a.pinned_prompt_version, p.name AS prompt FROM agents a
             LEFT JOIN prompts p ON p.id = a.prompt_id ORDER BY a.id`),
    ).toEqual([
      { name: 'Order agent', pinned_prompt_version: 4, prompt: 'Order status' },
      {
        name: 'Concise order agent',
        pinned_prompt_version: null,
        prompt: 'Order status (concise)',
      },
      { name: 'Complaints agent', pinned_prompt_version: 2, prompt: 'Complaints' },
      { name: 'Unassigned agent', pinned_prompt_version: null, prompt: null },
    ]);
    expect(
      await query(`SELECT e.status, e.organization_id, v.name, v.weight, v.is_control, a.name AS agent
             FROM experiment_variants v JOIN experiments e ON e.id = v.experiment_id
             JOIN agents a ON a.id = v.agent_id ORDER BY v.position`),
    ).toEqual([
      {
        status: 'draft',
        organization_id: 1,
        name: 'Current',
        weight: 50,
        is_control: 1,
        agent: 'Order agent',
      },
      {
        status: 'draft',
        organization_id: 1,
        name: 'Concise',
        weight: 50,
        is_control: 0,
        agent: 'Concise order agent',
      },
    ]);
    expect(await query(`SELECT name, provider, provider_secret FROM channels ORDER BY id`)).toEqual(
      [
        { name: 'Customer line', provider: 'records', provider_secret: null },
        { name: 'Twilio line', provider: 'twilio', provider_secret: 'example-auth-token' },
        { name: 'Chat widget', provider: null, provider_secret: null },
      ],
    );
    expect(
      await query(
        `SELECT timestamp FROM (SELECT id, last_updated AS timestamp FROM prompts) AS p
         ORDER BY id LIMIT 1`,
      ),
    ).toEqual([{ timestamp: '2026-03-10T14:05:00.000Z' }]);
  });

  it('updates rather than duplicates when the same file is loaded again, with the same ids', async () => {
    const before = await tableCounts();
    const result = await workspace.run(['load', RECORDS_EXAMPLE, '--org', '1']);
    expect(result.code).toBe(0);
    const { rows, summary } = loadOutput(result.stdout);
    expect(summary).toContain('prompts 3 updated');
    expect(rows).toEqual(asTableRows(await exampleRecordsInDb(), 'updated'));
    expect(await tableCounts()).toEqual(before);
  });

  it('prints the organization, the records and the counts as one JSON document with --json', async () => {
    const result = await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Acme', '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const document = JSON.parse(result.stdout) as {
      organization: unknown;
      records: Array<LoadedRecordRow & { action: string }>;
      summary: Record<string, { created: number; updated: number }>;
    };
    expect(document.organization).toEqual({ id: 1, name: 'Acme' });
    expect(document.records).toEqual(
      (await exampleRecordsInDb()).map((record) => ({ ...record, action: 'updated' })),
    );
    expect(document.summary.channel_targets).toEqual({ created: 0, updated: 5 });
    expect(document.summary.messaging_service_numbers).toEqual({ created: 0, updated: 2 });
    for (const [section, counts] of Object.entries(document.summary)) {
      const listed = document.records.filter((record) => record.section === section);
      expect(counts, section).toEqual({ created: 0, updated: listed.length });
    }
  });

  it("refuses to move a loaded experiment to another target, with the API's rule", async () => {
    const moved = writeRecords('moved.json', {
      experiments: [
        {
          name: 'Concise answers',
          target: { channel: 'Customer line', target: '+15550100002' },
          variants: [
            { name: 'Current', weight: 50, is_control: true, agent: 'Order agent' },
            { name: 'Concise', weight: 50, agent: 'Concise order agent' },
          ],
        },
      ],
    });
    const result = await workspace.run(['load', moved, '--org', 'Acme']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /experiments\[0\]\.target: The target of an experiment cannot change \(it is \d+\); keep it, or create a new experiment for target \d+\./,
    );
  });

  it('refuses to replace an experiment that is no longer a draft, writing nothing', async () => {
    const setStatus = (status: string) =>
      withWorkspaceDb((db) =>
        queryTestDb(
          db,
          sql`UPDATE experiments SET status = ${status} WHERE name = 'Concise answers' AND organization_id = 1`,
        ),
      );
    await setStatus('stopped');
    try {
      const before = await tableCounts();
      const result = await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Acme']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        'experiments[0].name: experiment "Concise answers" is stopped and only drafts can be replaced; give this one another name',
      );
      expect(await tableCounts()).toEqual(before);
    } finally {
      await setStatus('draft');
    }
  });

  it('keeps organizations apart: the same file loads separately into another one', async () => {
    const result = await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Globex']);
    expect(result.code).toBe(0);
    expect(
      await query(
        `SELECT organization_id, count(*) AS n FROM tools
         GROUP BY organization_id ORDER BY organization_id`,
      ),
    ).toEqual([
      { organization_id: 1, n: 3 },
      { organization_id: 2, n: 3 },
    ]);
  });

  it('links to existing records by id', async () => {
    const [tool] = (await query(
      `SELECT id FROM tools WHERE organization_id = 1 AND name = 'hang_up'`,
    )) as Array<{ id: number }>;
    const file = writeRecords('by-id.json', {
      prompts: [
        { name: 'By id', llm_config: { model: 'm', provider: 'openai' }, tools: [tool!.id] },
      ],
    });
    const result = await workspace.run(['load', file, '--org', 'Acme']);
    expect(result.code).toBe(0);
  });
});
