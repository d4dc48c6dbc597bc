// Load test of GET /api/v1/prompts/ (the prompts list's benchmark): `pnpm bench:prompts`. 10,000
// prompts with 5 tools each and 20,000 agents in a temporary SQLite file, the real server as its
// own process on 127.0.0.1, and autocannon on the default page and on a name_description search
// (and on the default page narrowed to fields without tools, to show what the tools cost), 10 s
// each at 16 connections and at 1 (the time one request takes without queueing). Two shapes of
// the same size: tools shared by several prompts, and every prompt with tools of its own;
// sharing makes each tool's prompts_info and agents_info longer. Results: docs/benchmarks.md.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDb, type SqliteDb } from '../../apps/server/src/db/engine/client.js';
import { migrateDb } from '../../apps/server/src/db/engine/migrate.js';
import { createApiKey } from '../../apps/server/src/use-cases/api-keys.js';
import { createOrganization } from '../../apps/server/src/db/repositories/organizations.js';
import { createRole } from '../../apps/server/src/db/repositories/roles.js';
import { seededRandom } from '../../apps/server/src/cli/demo-data.js';
import { startServerProcess } from '../../apps/server/test/support/server-process.js';
import { TABLE_HEADER, formatRow, load } from './load.js';

const PROMPTS = 10_000;
const TOOLS_PER_PROMPT = 5;
const AGENTS_PER_PROMPT = 2;
const SERVICES = 20;
const CONNECTIONS = 16;
const SECONDS = 10;
const SEARCH_TERM = 'refund';
const SHARED_TOOLS = 10_000;

interface DataShape {
  name: string;
  tools: number;
  /** The tool indexes of the prompt with this index. */
  toolsOf(promptIndex: number, random: () => number): number[];
}

const DATA_SHAPES: DataShape[] = [
  {
    name: 'shared tools: 10,000 tools, each in about 5 prompts',
    tools: SHARED_TOOLS,
    toolsOf: (_, random) => {
      const chosen = new Set<number>();
      while (chosen.size < TOOLS_PER_PROMPT) chosen.add(Math.floor(random() * SHARED_TOOLS));
      return [...chosen];
    },
  },
  {
    name: 'own tools: 50,000 tools, each in 1 prompt',
    tools: PROMPTS * TOOLS_PER_PROMPT,
    toolsOf: (promptIndex) =>
      Array.from({ length: TOOLS_PER_PROMPT }, (_, k) => promptIndex * TOOLS_PER_PROMPT + k),
  },
];

const TOPICS = [
  'billing',
  'refund',
  'shipping',
  'returns',
  'appointments',
  'warranty',
  'onboarding',
  'outage',
  'upgrade',
  'cancellation',
  'payments',
  'delivery',
  'password',
  'insurance',
  'claims',
  'orders',
  'invoices',
  'subscriptions',
  'complaints',
  'feedback',
];

function toolDefinition(name: string, topic: string): string {
  return JSON.stringify({
    type: 'endpoint',
    endpoint: {
      argument_location: 'body',
      method: 'post',
      url: `https://${topic}.example.com/api/${name}`,
    },
    static_parameters: [
      { name: 'region', type: 'string', description: 'Data region', required: true, default: 'us' },
    ],
    tool: {
      type: 'function',
      function: {
        name,
        description: `Looks up ${topic} records for the caller.`,
        parameters: {
          type: 'object',
          properties: {
            customer_id: { type: 'string', description: 'The customer' },
            reference: { type: 'string', description: `A ${topic} reference number` },
          },
          required: ['customer_id'],
        },
      },
    },
  });
}

/** Writes the whole data set with prepared statements in one transaction. */
function fillDatabase(db: SqliteDb, organizationId: number, shape: DataShape): void {
  const random = seededRandom(4);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const sqlite = db.sqlite;
  const insertService = sqlite.prepare(
    'INSERT INTO services (organization_id, name) VALUES (?, ?)',
  );
  const insertTool = sqlite.prepare(
    `INSERT INTO tools (organization_id, service_id, name, version_number, definition, last_updated,
       last_updated_by) VALUES (?, ?, ?, 1, ?, ?, 'bench@agentline.dev')`,
  );
  const insertPrompt = sqlite.prepare(
    `INSERT INTO prompts (organization_id, name, type, description, context, llm_config,
       session_end_enabled, session_end_tool_id, version_number, edit_comments, last_updated,
       last_updated_by) VALUES (?, ?, 'prompt_v1', ?, ?, ?, 1, ?, ?, ?, ?, ?)`,
  );
  const linkTool = sqlite.prepare('INSERT INTO prompt_tools (prompt_id, tool_id) VALUES (?, ?)');
  const insertAgent = sqlite.prepare(
    'INSERT INTO agents (organization_id, name, prompt_id, pinned_prompt_version) VALUES (?, ?, ?, ?)',
  );
  const start = Date.parse('2025-01-01T00:00:00.000Z');
  const isoAt = (index: number, count: number) =>
    new Date(start + Math.floor((index / count) * 365 * 86_400_000)).toISOString();

  sqlite.transaction(() => {
    const serviceIds = TOPICS.slice(0, SERVICES).map((topic) =>
      Number(insertService.run(organizationId, `${topic} API`).lastInsertRowid),
    );
    const toolIds: number[] = [];
    for (let index = 0; index < shape.tools; index += 1) {
      const topic = pick(TOPICS);
      const name = `${topic}_lookup_${index}`;
      toolIds.push(
        Number(
          insertTool.run(
            organizationId,
            pick(serviceIds),
            name,
            toolDefinition(name, topic),
            isoAt(index, shape.tools),
          ).lastInsertRowid,
        ),
      );
    }
    for (let index = 0; index < PROMPTS; index += 1) {
      const [topic, other] = [pick(TOPICS), pick(TOPICS)];
      const promptTools = shape
        .toolsOf(index, random)
        .map((toolIndex) => toolIds[toolIndex]!)
        .sort((a, b) => a - b);
      const promptId = Number(
        insertPrompt.run(
          organizationId,
          `${topic} assistant ${index}`,
          `Answers ${other} questions for customers in region ${index % 7}.`,
          `You are the ${topic} assistant of Acme. `.repeat(3) +
            'Greet the caller, find out what they need, look records up with your tools before ' +
            'answering, never guess amounts or dates, and end the call politely when done. ' +
            'Escalate to a person when the caller asks for one or is upset.',
          JSON.stringify({ model: 'gpt-4o', provider: 'openai', version: '2024-08-06' }),
          promptTools[TOOLS_PER_PROMPT - 1],
          1 + (index % 9),
          index % 3 === 0 ? 'Shorter greeting.' : null,
          isoAt(index, PROMPTS),
          `editor${index % 25}@acme.example`,
        ).lastInsertRowid,
      );
      for (const toolId of promptTools) linkTool.run(promptId, toolId);
      for (let agent = 0; agent < AGENTS_PER_PROMPT; agent += 1) {
        insertAgent.run(
          organizationId,
          `${topic} agent ${index}-${agent}`,
          promptId,
          agent === 0 ? 1 + (index % 9) : null,
        );
      }
    }
  })();
}

interface Scenario {
  label: string;
  path: string;
}

const SCENARIOS: Scenario[] = [
  { label: 'default page (limit 25)', path: '/api/v1/prompts/' },
  {
    label: `name_description "${SEARCH_TERM}"`,
    path: `/api/v1/prompts/?search_fields=name_description&search_field_values=${SEARCH_TERM}`,
  },
  // What the page costs without the tool objects: fields that show none skip loading them.
  {
    label: 'default page, fields without tools',
    path: '/api/v1/prompts/?fields=name&fields=description&fields=agent_count&fields=last_updated',
  },
];

async function measure(baseUrl: string, key: string, scenario: Scenario): Promise<void> {
  const url = `${baseUrl}${scenario.path}`;
  const headers = { 'Service-API-Key': key };
  // The first request builds the page (the server keeps it until records are loaded again), so
  // its time is the cost of an uncached page; the runs below measure the steady state.
  const started = performance.now();
  const probe = await fetch(url, { headers });
  const body = await probe.text();
  const uncachedMs = performance.now() - started;
  if (probe.status !== 200) throw new Error(`${scenario.label}: ${probe.status} ${body}`);
  const { total_count: totalCount } = JSON.parse(body) as { total_count: number };
  console.log(
    `${scenario.label}: ${Math.round(body.length / 1024)} KiB per answer, total_count ${totalCount}, first (uncached) answer ${uncachedMs.toFixed(1)} ms`,
  );
  await load({ url, headers, connections: CONNECTIONS, seconds: 2 });
  for (const connections of [CONNECTIONS, 1]) {
    const result = await load({ url, headers, connections, seconds: SECONDS });
    if (result.non2xx + result.errors > 0) throw new Error(`${scenario.label}: failed requests`);
    console.log(formatRow(`  ${connections} connection(s)`, result));
  }
}

async function benchmark(shape: DataShape): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'agentline-bench-prompts-'));
  const databaseUrl = join(directory, 'bench.db');
  try {
    const db = createDb(databaseUrl);
    assert(db.kind === 'sqlite', 'the prompts bench writes a SQLite file');
    await migrateDb(db);
    const organization = await createOrganization(db, 'Bench');
    const role = await createRole(db, {
      organizationId: organization.id,
      name: 'reader',
      permissions: ['PROMPTS_READ'],
    });
    const { fullKey } = await createApiKey(db, {
      organizationId: organization.id,
      roleId: role.id,
      name: 'bench',
    });
    const filling = performance.now();
    fillDatabase(db, organization.id, shape);
    db.sqlite.exec('ANALYZE');
    await db.close();
    console.log(
      `\n${shape.name}; ${PROMPTS} prompts x ${TOOLS_PER_PROMPT} tools, ${PROMPTS * AGENTS_PER_PROMPT} agents (written in ${Math.round(performance.now() - filling)} ms)`,
    );

    const server = await startServerProcess({ DATABASE_URL: databaseUrl }, { keepOutput: false });
    try {
      console.log(TABLE_HEADER);
      for (const scenario of SCENARIOS) await measure(server.baseUrl, fullKey, scenario);
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

console.log(
  `node ${process.version}, ${cpus().length} x ${cpus()[0]?.model}, load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}, ${SECONDS} s per run`,
);
for (const shape of DATA_SHAPES) await benchmark(shape);
