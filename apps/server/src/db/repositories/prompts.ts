// Reading the prompts list. Prompts, tools, services and agents are written by `agentline load`
// and `agentline demo`. A page costs the same number of queries whatever its size: the page and
// its count, then (when the items show tools) four more for the whole page at once: which tools
// its prompts link, those tools, the prompts linking them and the agents using those prompts.
// The page and its count are the shared list reader's (selectListPage); the four tool queries
// are each backend's own, as their plans are. All six are one list read (runListRead): one
// snapshot, within the list query timeout.

import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { ListPosition, ListQuery, SearchFilter } from '../../vocabulary/list-query.js';
import type { PromptProperty } from '../../vocabulary/prompts.js';
import type { Db } from '../engine/client.js';
import { perDatabase } from '../engine/caches.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import {
  idIn,
  parsedJson,
  runListRead,
  runSteps,
  selectList,
  selectRows,
  type Steps,
} from '../engine/portable-sql.js';
import { prompts, promptTools, tools, type LlmConfig } from '../schema/sqlite.js';
import type { Spelling } from '../engine/spelling.js';

export interface IdName {
  id: number;
  name: string;
}

export type PromptRow = typeof prompts.$inferSelect & {
  /** The prompt's tool ids in ascending order; empty when the tools were not asked for. */
  toolIds: number[];
};

export type ToolRow = Omit<typeof tools.$inferSelect, 'organizationId'> & {
  /** Null when the tool has no service or its service does not exist. */
  serviceName: string | null;
  /** Prompts of the organization that link the tool, by id. */
  linkedPrompts: IdName[];
  /** Agents of the organization whose prompt links the tool, by id. */
  usingAgents: IdName[];
};

export interface PromptsWithTools {
  rows: PromptRow[];
  /** Every tool the prompts link or name as their session end tool. */
  tools: ReadonlyMap<number, ToolRow>;
}

export interface PromptPage extends PromptsWithTools {
  totalCount: number;
  /** Where the next page starts; null on the last page. */
  next: ListPosition | null;
}

type ToolLink = { promptId: number; toolId: number };
type ToolUser = IdName & { toolId: number };

// The reads of a page's tools, given the ids they start from. SQLite gets the ids as one JSON
// list (one statement text whatever their number, so it stays prepared) and keeps tables joined
// with CROSS JOIN in the written order: these start from those few ids and reach the rest by
// index, instead of walking the organization's rows to find them (which its planner may choose,
// not knowing how few ids there are). NOT INDEXED leaves a prompt only its primary key: an index
// on the organization would otherwise look covering enough to be walked once per link. PostgreSQL
// gets one array parameter and plans for the actual ids, so it needs no hints; neither backend
// accepts the other's spelling of these, hence two sets (docs/architecture.md).
const TOOL_FIELDS = sql`t.id, t.name, t.service_id AS "serviceId", s.name AS "serviceName",
  t.version_number AS "versionNumber", t.definition, t.last_updated AS "lastUpdated",
  t.last_updated_by AS "lastUpdatedBy", t.last_updated_comments AS "lastUpdatedComments"`;

const TOOL_QUERIES = {
  sqlite: {
    toolLinks: (promptIds: number[]) =>
      sql`SELECT pt.prompt_id AS "promptId", pt.tool_id AS "toolId"
        FROM json_each(${JSON.stringify(promptIds)}) AS listed
        CROSS JOIN prompt_tools AS pt ON pt.prompt_id = listed.value
        ORDER BY pt.prompt_id, pt.tool_id`,
    tools: (toolIds: number[], organizationId: number) =>
      sql`SELECT ${TOOL_FIELDS}
        FROM json_each(${JSON.stringify(toolIds)}) AS wanted CROSS JOIN tools AS t ON t.id = wanted.value
        LEFT JOIN services AS s ON s.id = t.service_id AND s.organization_id = t.organization_id
        WHERE t.organization_id = ${organizationId}`,
    linkingPrompts: (toolIds: number[], organizationId: number) =>
      sql`SELECT pt.tool_id AS "toolId", p.id, p.name
        FROM json_each(${JSON.stringify(toolIds)}) AS wanted
        CROSS JOIN prompt_tools AS pt ON pt.tool_id = wanted.value
        CROSS JOIN prompts AS p NOT INDEXED ON p.id = pt.prompt_id
        WHERE p.organization_id = ${organizationId}
        ORDER BY pt.tool_id, p.id`,
    usingAgents: (toolIds: number[], organizationId: number) =>
      sql`SELECT pt.tool_id AS "toolId", a.id, a.name
        FROM json_each(${JSON.stringify(toolIds)}) AS wanted
        CROSS JOIN prompt_tools AS pt ON pt.tool_id = wanted.value
        CROSS JOIN agents AS a ON a.prompt_id = pt.prompt_id
        WHERE a.organization_id = ${organizationId}
        ORDER BY pt.tool_id, a.id`,
  },
  postgres: {
    toolLinks: (promptIds: number[]) =>
      sql`SELECT prompt_id AS "promptId", tool_id AS "toolId" FROM prompt_tools
        WHERE prompt_id = ANY(${sql.param(promptIds)}) ORDER BY prompt_id, tool_id`,
    tools: (toolIds: number[], organizationId: number) =>
      sql`SELECT ${TOOL_FIELDS} FROM tools AS t
        LEFT JOIN services AS s ON s.id = t.service_id AND s.organization_id = t.organization_id
        WHERE t.id = ANY(${sql.param(toolIds)}) AND t.organization_id = ${organizationId}`,
    linkingPrompts: (toolIds: number[], organizationId: number) =>
      sql`SELECT pt.tool_id AS "toolId", p.id, p.name
        FROM prompt_tools AS pt JOIN prompts AS p ON p.id = pt.prompt_id
        WHERE pt.tool_id = ANY(${sql.param(toolIds)}) AND p.organization_id = ${organizationId}
        ORDER BY pt.tool_id, p.id`,
    usingAgents: (toolIds: number[], organizationId: number) =>
      sql`SELECT pt.tool_id AS "toolId", a.id, a.name
        FROM prompt_tools AS pt JOIN agents AS a ON a.prompt_id = pt.prompt_id
        WHERE pt.tool_id = ANY(${sql.param(toolIds)}) AND a.organization_id = ${organizationId}
        ORDER BY pt.tool_id, a.id`,
  },
};

type StoredTool = Omit<ToolRow, 'definition' | 'linkedPrompts' | 'usingAgents'> & {
  /** JSON text on SQLite, parsed JSON on PostgreSQL. */
  definition: ToolRow['definition'] | string;
};

function readToolLinks(db: Db, promptIds: number[]): Steps<ToolLink[]> {
  return selectRows<ToolLink>(TOOL_QUERIES[db.kind].toolLinks(promptIds));
}

interface ToolReadRows {
  tools: StoredTool;
  linkingPrompts: ToolUser;
  usingAgents: ToolUser;
}

/** One of the reads about the tools with these ids, among the organization's records. */
function readForTools<K extends keyof ToolReadRows>(
  db: Db,
  read: K,
  toolIds: number[],
  organizationId: number,
): Steps<Array<ToolReadRows[K]>> {
  return selectRows<ToolReadRows[K]>(TOOL_QUERIES[db.kind][read](toolIds, organizationId));
}

/** Groups rows by a key, keeping their order. */
function groupBy<Row, Value>(
  rows: readonly Row[],
  keyOf: (row: Row) => number,
  valueOf: (row: Row) => Value,
): Map<number, Value[]> {
  const groups = new Map<number, Value[]>();
  for (const row of rows) {
    const key = keyOf(row);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(valueOf(row));
  }
  return groups;
}

const idName = ({ id, name }: IdName): IdName => ({ id, name });

/**
 * Searching `tools` without building every prompt's joined names: a value without a comma lies
 * within one tool name, so the prompts linking a tool whose name contains it are the same
 * prompts, whose ids are found from the organization's tools by index.
 */
function promptsWithToolNamed(spelling: Spelling) {
  return (filter: SearchFilter<PromptProperty>, organizationId: number): SQL | undefined => {
    const value = String(filter.value);
    if (value.includes(',')) return undefined;
    return sql`SELECT ${promptTools.promptId} FROM ${promptTools}
      JOIN ${tools} ON ${tools.id} = ${promptTools.toolId}
      WHERE ${tools.organizationId} = ${organizationId} AND ${spelling.contains(tools.name, value)}`;
  };
}

/** A prompt row. */
const PROMPT_FIELDS = getTableColumns(prompts);
const PROMPT_ROW = selectList(PROMPT_FIELDS);

/**
 * The prompts list. llm_config is searched and ordered by the JSON text JSON.stringify wrote when
 * the prompt was loaded; the joined tool names, a description or a context may be longer than
 * an index entry holds.
 */
export const promptsList = perDatabase(({ spelling }: Db): ListTable<PromptProperty> => ({
  from: sql`${prompts}`,
  organizationColumn: prompts.organizationId,
  primaryKey: prompts.id,
  fields: PROMPT_FIELDS,
  columns: {
    id: prompts.id,
    name: prompts.name,
    name_exact: prompts.name,
    description: prompts.description,
    name_description: prompts.name,
    context: prompts.context,
    tools: prompts.toolNames,
    llm_config: spelling.jsonText(prompts.llmConfig),
    last_updated: prompts.lastUpdated,
    last_updated_by: prompts.lastUpdatedBy,
    agent_count: prompts.agentCount,
    session_end_enabled: prompts.sessionEndEnabled,
  },
  windowColumn: prompts.lastUpdated,
  either: { columns: [prompts.name, prompts.description] },
  keySearches: { tools: promptsWithToolNamed(spelling) },
  prefixOrdered: {
    tools: { column: prompts.toolNames, nullable: false },
    description: { column: prompts.description, nullable: true },
    context: { column: prompts.context, nullable: true },
  },
}));

type StoredPrompt = Omit<PromptRow, 'toolIds'>;

/** A prompt row as the driver returns it: JSON as text and booleans as 0 or 1 on SQLite. */
type DriverPrompt = Omit<StoredPrompt, 'llmConfig' | 'sessionEndEnabled'> & {
  llmConfig: LlmConfig | string;
  sessionEndEnabled: boolean | number;
};

/** A prompt as stored, from its row as the driver returns it. */
const storedPrompt = <Row extends DriverPrompt>(row: Row) => ({
  ...row,
  llmConfig: parsedJson(row.llmConfig),
  sessionEndEnabled: Boolean(row.sessionEndEnabled),
});

export async function listPrompts(
  db: Db,
  organizationId: number,
  query: ListQuery<PromptProperty>,
  { withTools }: { withTools: boolean },
): Promise<PromptPage> {
  return runListRead(db, function* () {
    const page = yield* selectListPage<PromptProperty, DriverPrompt>(
      promptsList(db),
      organizationId,
      query,
      db,
    );
    const rows = page.rows.map(storedPrompt);
    const { totalCount, next } = page;
    if (!withTools) {
      return {
        rows: rows.map((row) => ({ ...row, toolIds: [] })),
        tools: new Map(),
        totalCount,
        next,
      };
    }
    return { ...(yield* withTheirTools(db, organizationId, rows)), totalCount, next };
  });
}

/** The organization's prompts with these ids, in id order, with their tools; others are left out. */
export async function findPrompts(
  db: Db,
  organizationId: number,
  ids: readonly number[],
): Promise<PromptsWithTools> {
  return runSteps(db, function* () {
    const rows = (yield* selectRows<DriverPrompt>(
      sql`SELECT ${PROMPT_ROW} FROM ${prompts}
        WHERE ${prompts.organizationId} = ${organizationId} AND ${idIn(prompts.id, ids)}
        ORDER BY ${prompts.id}`,
    )).map(storedPrompt);
    return yield* withTheirTools(db, organizationId, rows);
  });
}

function* withTheirTools(
  db: Db,
  organizationId: number,
  rows: readonly StoredPrompt[],
): Steps<PromptsWithTools> {
  if (rows.length === 0) return { rows: [], tools: new Map() };
  const links = yield* readToolLinks(
    db,
    rows.map((row) => row.id),
  );
  const toolIdsOfPrompt = groupBy(
    links,
    (link) => link.promptId,
    (link) => link.toolId,
  );
  const wantedSet = new Set(links.map((link) => link.toolId));
  for (const row of rows) if (row.sessionEndToolId !== null) wantedSet.add(row.sessionEndToolId);
  const wanted = [...wantedSet].sort((a, b) => a - b);

  const linkingPrompts = groupBy(
    yield* readForTools(db, 'linkingPrompts', wanted, organizationId),
    (row) => row.toolId,
    idName,
  );
  const usingAgents = groupBy(
    yield* readForTools(db, 'usingAgents', wanted, organizationId),
    (row) => row.toolId,
    idName,
  );
  const tools = new Map<number, ToolRow>();
  for (const tool of yield* readForTools(db, 'tools', wanted, organizationId)) {
    tools.set(tool.id, {
      ...tool,
      definition: parsedJson(tool.definition),
      linkedPrompts: linkingPrompts.get(tool.id) ?? [],
      usingAgents: usingAgents.get(tool.id) ?? [],
    });
  }
  return {
    rows: rows.map((row) => ({ ...row, toolIds: toolIdsOfPrompt.get(row.id) ?? [] })),
    tools,
  };
}
