// agentline load: platform records from a JSON file, all or nothing, with errors that point into
// the file.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/engine/client.js';
import { createWorkspace, RECORDS_EXAMPLE, type TempWorkspace } from './fixtures/cli-harness.js';
import { queryTestDb } from './support/test-database.js';

let workspace: TempWorkspace;

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

async function withWorkspaceDb<T>(work: (db: Db) => Promise<T>): Promise<T> {
  const db = createDb(workspace.databaseUrl);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/** Rows of raw SQL; booleans read as 0 and 1 on both backends, as SQLite stores them. */
async function rowsOf(db: Db, text: string): Promise<Array<Record<string, unknown>>> {
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

/** A table's lines split into cells: cells hold single spaces, columns are two or more apart. */
function cellsOf(lines: string[]): string[][] {
  return lines.map((line) => line.split(/\s{2,}/));
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

function writeRecords(name: string, content: unknown): string {
  const path = join(workspace.dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

beforeAll(async () => {
  workspace = await createWorkspace();
  expect((await workspace.run(['org', 'create', 'Acme'])).code).toBe(0);
  expect((await workspace.run(['org', 'create', 'Globex'])).code).toBe(0);
});

afterAll(() => workspace.remove());

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

  it('lists the agents, channels and targets it wrote, with the ids an experiment needs', async () => {
    const agents = await workspace.run(['list', 'agents', '--org', 'Acme']);
    expect(agents.code).toBe(0);
    const agentLines = agents.stdout.trimEnd().split('\n');
    expect(agentLines[0]).toMatch(/^ID\s+NAME\s+PROMPT ID\s+PINNED VERSION$/);
    const dbAgents = (await query(
      'SELECT id, name FROM agents WHERE organization_id = 1 ORDER BY id',
    )) as Array<{ id: number; name: string }>;
    expect(cellsOf(agentLines.slice(1)).map((cells) => cells.slice(0, 2))).toEqual(
      dbAgents.map((agent) => [String(agent.id), agent.name]),
    );

    const targets = await workspace.run(['list', 'targets', '--org', 'Acme']);
    expect(targets.code).toBe(0);
    const targetLines = targets.stdout.trimEnd().split('\n');
    expect(targetLines[0]).toMatch(/^ID\s+CHANNEL\s+TARGET\s+MODE\s+AGENT ID\s+AGENT TEST$/);
    const dbTargets = (await query(
      'SELECT id, target FROM channel_targets WHERE organization_id = 1 ORDER BY id',
    )) as Array<{ id: number; target: string }>;
    expect(cellsOf(targetLines.slice(1)).map(([id, , target]) => [id, target])).toEqual(
      dbTargets.map((target) => [String(target.id), target.target]),
    );

    const channels = await workspace.run(['list', 'channels', '--org', 'Acme']);
    expect(channels.code).toBe(0);
    const channelLines = channels.stdout.trimEnd().split('\n');
    expect(channelLines[0]).toMatch(/^ID\s+NAME\s+KIND\s+PROVIDER\s+TARGETS\s+NUMBERS$/);
    const channelIds = await channelIdsByName();
    expect(cellsOf(channelLines.slice(1))).toEqual([
      [String(channelIds['Customer line']), 'Customer line', 'telephony', 'records', '3', '3'],
      [String(channelIds['Twilio line']), 'Twilio line', 'telephony', 'twilio', '1', '1'],
      [String(channelIds['Chat widget']), 'Chat widget', 'web_chat', '-', '1', '0'],
    ]);

    const empty = await workspace.run(['list', 'agents', '--org', 'Globex']);
    expect(empty).toMatchObject({ code: 0, stdout: '' });
    expect(empty.stderr).toContain('organization "Globex" has no agents yet');
    const emptyJson = await workspace.run(['list', 'targets', '--org', 'Globex', '--json']);
    expect(emptyJson).toMatchObject({ code: 0, stdout: '[]\n' });
  });

  it('prints each list as one JSON array with --json, in the field names of the API', async () => {
    const listJson = async (name: string) => {
      const result = await workspace.run(['list', name, '--org', 'Acme', '--json']);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(result.stdout) as unknown;
    };
    expect(await listJson('agents')).toEqual(
      await query(`SELECT id, name, prompt_id, pinned_prompt_version
                   FROM agents WHERE organization_id = 1 ORDER BY id`),
    );
    const targets = (await listJson('targets')) as Array<Record<string, unknown>>;
    expect(
      targets.map(({ is_agent_test, ...target }) => ({
        ...target,
        is_agent_test: Number(is_agent_test),
      })),
    ).toEqual(
      await query(`SELECT t.id, t.channel_id, c.name AS channel_name, t.target, t.target_mode,
                     t.agent_id, t.is_agent_test
                   FROM channel_targets t JOIN channels c ON c.id = t.channel_id
                   WHERE t.organization_id = 1 ORDER BY t.id`),
    );
    expect(targets.map((target) => typeof target.is_agent_test)).toEqual(Array(5).fill('boolean'));
    const channelIds = await channelIdsByName();
    expect(await listJson('channels')).toEqual([
      {
        id: channelIds['Customer line'],
        name: 'Customer line',
        kind: 'telephony',
        provider: 'records',
        target_count: 3,
        number_count: 3,
      },
      {
        id: channelIds['Twilio line'],
        name: 'Twilio line',
        kind: 'telephony',
        provider: 'twilio',
        target_count: 1,
        number_count: 1,
      },
      {
        id: channelIds['Chat widget'],
        name: 'Chat widget',
        kind: 'web_chat',
        provider: null,
        target_count: 1,
        number_count: 0,
      },
    ]);
  });

  it("never shows a channel's provider settings or secret", async () => {
    for (const format of [[], ['--json']]) {
      const result = await workspace.run(['list', 'channels', '--org', 'Acme', ...format]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Twilio line');
      for (const secret of [
        'example-auth-token',
        'AC00000000000000000000000000000001',
        '127.0.0.1:9',
      ]) {
        expect(result.stdout).not.toContain(secret);
      }
      expect(result.stdout).not.toMatch(/provider_?(secret|config)/i);
    }
  });

  it('refuses an unknown list with exit code 2, naming the lists there are', async () => {
    expect(await workspace.run(['list', 'phones', '--org', 'Acme'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'agentline: unknown list "phones" — name one of: agents, channels, targets, numbers; for example: agentline list agents --org <id|name>\n',
    });
    // The commands it replaces are gone.
    const old = await workspace.run(['agents', 'list', '--org', 'Acme']);
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/^agentline: unknown command "agents"/);
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

describe('bad input loads nothing', () => {
  let before: Record<string, number>;

  beforeAll(async () => {
    before = await tableCounts();
  });

  async function expectFailure(content: unknown, expectedLines: string[]) {
    writeRecords('bad.json', content);
    // Relative, as typed by a person: resolved from the workspace, the command's directory.
    const result = await workspace.run(['load', 'bad.json', '--org', 'Acme']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual(expectedLines);
    expect(await tableCounts()).toEqual(before);
  }

  it('reports invalid JSON with its line and column', async () => {
    await expectFailure('{\n  "services": [\n    { "name": "A" },\n  ]\n}\n', [
      `agentline: bad.json is not valid JSON: line 4, column 3: Unexpected token ']' — fix the JSON there (a trailing comma, a missing comma or quote, and comments are the usual causes) and run the command again; nothing was written`,
    ]);
    await expectFailure('{\n  "services": [\n    { "name": "A" }\n    { "name": "B" }\n  ]\n}\n', [
      `agentline: bad.json is not valid JSON: line 4, column 5: Expected ',' or ']' after array element — fix the JSON there (a trailing comma, a missing comma or quote, and comments are the usual causes) and run the command again; nothing was written`,
    ]);
  });

  it('reports schema violations by JSON path', async () => {
    await expectFailure(
      {
        services: [{ name: '' }],
        tools: [{ name: 'x', definition: { endpoint: { url: 5 } }, colour: 'red' }],
        prompts: [{ name: 'p', llm_config: { model: 'm', provider: 'openia' } }],
        agents: [{ prompt: 'p' }],
      },
      [
        'agentline: bad.json: services[0].name: must not be empty',
        'agentline: bad.json: tools[0].definition.endpoint.url: must be text, not 5',
        'agentline: bad.json: tools[0].colour: unknown field; check its spelling or remove it',
        'agentline: bad.json: prompts[0].llm_config.provider: must be one of "openai", "azure_openai", "anthropic", "google", not "openia"',
        'agentline: bad.json: agents[0].name: is required (text); add it',
        'agentline: bad.json was not loaded: 5 problems — fix them and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('reports rules across records: duplicate names, experiment weights, channel settings', async () => {
    await expectFailure(
      {
        services: [{ name: 'S' }, { name: 'S' }],
        channels: [
          { name: 'chat', kind: 'web_chat', provider: 'twilio' },
          { name: 'phone', kind: 'telephony', provider: 'twilio' },
        ],
        experiments: [
          {
            name: 'E',
            target: 1,
            variants: [
              { name: 'a', weight: 60, agent: 'Order agent' },
              { name: 'b', weight: 30, agent: 'Order agent' },
            ],
          },
        ],
      },
      [
        'agentline: bad.json: services[1].name: "S" is used twice (also services[0]); give each entry its own name or merge them',
        'agentline: bad.json: channels[0].provider: only telephony channels have a provider; remove it or set kind to "telephony"',
        'agentline: bad.json: channels[1].provider_config: the twilio provider needs provider_config.account_sid; add the account SID',
        'agentline: bad.json: channels[1].provider_secret: the twilio provider needs provider_secret (the auth token); add it',
        "agentline: bad.json: experiments[0].variants: The variant weights total 90; they must total 100 (weights are whole percentages of the target's traffic).",
        'agentline: bad.json: experiments[0].variants: Exactly one variant must have is_control: true; 0 do.',
        'agentline: bad.json: experiments[0].variants[1].agent: Agent "Order agent" is already used by variant 0; each variant must use a different agent.',
        'agentline: bad.json was not loaded: 7 problems — fix them and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('reports every dangling reference and rolls back records written before it', async () => {
    await expectFailure(
      {
        services: [{ name: 'New service' }],
        tools: [{ name: 'new_tool', service: 'Missing service', definition: {} }],
        prompts: [
          {
            name: 'New prompt',
            llm_config: { model: 'm', provider: 'openai' },
            tools: ['new_tool', 'lookup', 9999],
          },
        ],
        agents: [{ name: 'New agent', prompt: 'New prompt' }],
        a2p_campaigns: [
          {
            sid: 'QE9',
            messaging_service: 'MG9',
            brand: 'BN00000000000000000000000000000001',
            campaign_status: 'VERIFIED',
          },
        ],
        experiments: [
          {
            name: 'On the test line',
            target: { channel: 'Customer line', target: 'agent-test', target_mode: 'test' },
            variants: [
              { name: 'a', weight: 50, is_control: true, agent: 'New agent' },
              { name: 'b', weight: 50, agent: 'Order agent' },
            ],
          },
        ],
      },
      [
        'agentline: bad.json: tools[0].service: no service named "Missing service" in this file or organization; add it under "services"',
        'agentline: bad.json: prompts[0].tools[1]: no tool named "lookup" in this file or organization; add it under "tools"',
        'agentline: bad.json: prompts[0].tools[2]: no tool with id 9999 in this organization; use the name of one in this file or an existing id',
        'agentline: bad.json: a2p_campaigns[0].messaging_service: no messaging service with sid "MG9" in this file or organization; add it under "messaging_services"',
        // The API's own rule and message (domain/experiments.ts targetProblems).
        'agentline: bad.json: experiments[0].target: Channel target 3 is a built-in agent-test target, which experiments do not support; choose a live target.',
        'agentline: bad.json was not loaded: 5 problems — fix them and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('does not see records of another organization', async () => {
    const globexOnly = writeRecords('globex-ref.json', {
      agents: [{ name: 'Stranger', prompt: 9999 }],
    });
    const result = await workspace.run(['load', globexOnly, '--org', 'Acme']);
    expect(result.code).toBe(1);
    const [globexPrompt] = (await query(
      `SELECT id FROM prompts WHERE organization_id = 2 ORDER BY id LIMIT 1`,
    )) as Array<{ id: number }>;
    const crossTenant = writeRecords('cross.json', {
      agents: [{ name: 'Stranger', prompt: globexPrompt!.id }],
    });
    const crossResult = await workspace.run(['load', crossTenant, '--org', 'Acme']);
    expect(crossResult.code).toBe(1);
    expect(crossResult.stderr).toContain(
      `agents[0].prompt: no prompt with id ${globexPrompt!.id} in this organization`,
    );
  });

  it('keeps a number in one messaging service', async () => {
    await expectFailure(
      { messaging_services: [{ sid: 'MG-other', name: 'Other', numbers: ['+15550100001'] }] },
      [
        'agentline: bad.json: messaging_services[0].numbers[0]: +15550100001 already belongs to messaging service MG00000000000000000000000000000001 of this organization and a number belongs to one service only; list MG00000000000000000000000000000001 in this file without it, or drop it here',
        'agentline: bad.json was not loaded: 1 problem — fix it and run the command again; nothing was written (the format is apps/server/schemas/platform-records.schema.json)',
      ],
    );
  });

  it('names a missing file and a missing organization', async () => {
    const missing = await workspace.run(['load', 'nope.json', '--org', 'Acme']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^agentline: cannot read .*nope\.json \(ENOENT\) — check the file name/,
    );
    const unknownOrg = await workspace.run(['load', RECORDS_EXAMPLE, '--org', 'Initech']);
    expect(unknownOrg.code).toBe(1);
    expect(unknownOrg.stderr).toContain('no organization "Initech"');
  });
});
