// Reading the prompts list. Prompts, tools, services and agents are written by `agentline load`
// and `agentline demo`. A page costs the same number of queries whatever its size: the page and
// its count, then (when the items show tools) four more for the whole page at once: which tools
// its prompts link, those tools, the prompts linking them and the agents using those prompts.

import { and, count, eq, getTableColumns, getTableName, inArray, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { ListQuery, SearchFilter } from '../../domain/list-query.js';
import type { PromptProperty } from '../../domain/prompts.js';
import type { Db } from '../client.js';
import { contains, listConditions, listOrder, type ColumnMap } from '../list-sql.js';
import { perDatabase } from '../prepared.js';
import { agents, prompts, promptTools, tools } from '../schema.js';

export interface IdName {
  id: number;
  name: string;
}

export type PromptRow = typeof prompts.$inferSelect & {
  agentCount: number;
  /** The tools' names joined by `,` in tool-id order. */
  toolNames: string;
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
}

/**
 * `"table"."column"`. Drizzle leaves the table out of a single-table select list, where a
 * correlated subquery would then read its own table's column of the same name.
 */
function qualified(column: SQLiteColumn): SQL {
  return sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;
}

// Correlated subqueries, so searching and ordering by these computed properties happen in SQL
// over the whole list, not in memory over one page.
const AGENT_COUNT = sql<number>`(SELECT count(*) FROM ${agents}
  WHERE ${qualified(agents.promptId)} = ${qualified(prompts.id)}
    AND ${qualified(agents.organizationId)} = ${qualified(prompts.organizationId)})`;

const TOOL_NAMES = sql<string>`coalesce((
  SELECT group_concat(${qualified(tools.name)}, ',' ORDER BY ${qualified(tools.id)})
  FROM ${promptTools} JOIN ${tools} ON ${qualified(tools.id)} = ${qualified(promptTools.toolId)}
  WHERE ${qualified(promptTools.promptId)} = ${qualified(prompts.id)}
    AND ${qualified(tools.organizationId)} = ${qualified(prompts.organizationId)}), '')`;

const PROMPT_COLUMNS: ColumnMap<PromptProperty> = {
  id: prompts.id,
  name: prompts.name,
  name_exact: prompts.name,
  description: prompts.description,
  name_description: prompts.name,
  context: prompts.context,
  tools: TOOL_NAMES,
  llm_config: prompts.llmConfig,
  last_updated: prompts.lastUpdated,
  last_updated_by: prompts.lastUpdatedBy,
  agent_count: AGENT_COUNT,
  session_end_enabled: prompts.sessionEndEnabled,
};

// The tools of a set of prompts are fetched with statements prepared once per database, each
// driven by a JSON list of ids. SQLite keeps tables joined with CROSS JOIN in the written order, so these
// start from those few ids and reach the rest by index, instead of walking the organization's
// rows to find them (which the planner may choose, not knowing how few ids there are). NOT
// INDEXED leaves a prompt only its primary key: an index on the organization would otherwise
// look covering enough to be walked once per link.
const toolStatements = perDatabase((db) => ({
  toolLinks: db.sqlite.prepare<[string], { promptId: number; toolId: number }>(
    `SELECT pt.prompt_id AS promptId, pt.tool_id AS toolId
     FROM json_each(?) AS listed CROSS JOIN prompt_tools AS pt ON pt.prompt_id = listed.value
     ORDER BY pt.prompt_id, pt.tool_id`,
  ),
  tools: db.sqlite.prepare<[string, number], StoredTool>(
    `SELECT t.id, t.name, t.service_id AS serviceId, s.name AS serviceName,
       t.version_number AS versionNumber, t.definition, t.last_updated AS lastUpdated,
       t.last_updated_by AS lastUpdatedBy, t.last_updated_comments AS lastUpdatedComments
     FROM json_each(?) AS wanted CROSS JOIN tools AS t ON t.id = wanted.value
     LEFT JOIN services AS s ON s.id = t.service_id AND s.organization_id = t.organization_id
     WHERE t.organization_id = ?`,
  ),
  linkingPrompts: db.sqlite.prepare<[string, number], IdName & { toolId: number }>(
    `SELECT pt.tool_id AS toolId, p.id, p.name
     FROM json_each(?) AS wanted CROSS JOIN prompt_tools AS pt ON pt.tool_id = wanted.value
     CROSS JOIN prompts AS p NOT INDEXED ON p.id = pt.prompt_id
     WHERE p.organization_id = ?
     ORDER BY pt.tool_id, p.id`,
  ),
  usingAgents: db.sqlite.prepare<[string, number], IdName & { toolId: number }>(
    `SELECT pt.tool_id AS toolId, a.id, a.name
     FROM json_each(?) AS wanted CROSS JOIN prompt_tools AS pt ON pt.tool_id = wanted.value
     CROSS JOIN agents AS a ON a.prompt_id = pt.prompt_id
     WHERE a.organization_id = ?
     ORDER BY pt.tool_id, a.id`,
  ),
}));

type StoredTool = Omit<ToolRow, 'definition' | 'linkedPrompts' | 'usingAgents'> & {
  definition: string;
};

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
 * prompts, found from the organization's tools by index.
 */
function promptsWithToolNamed(organizationId: number) {
  return (filter: SearchFilter<PromptProperty>): SQL | undefined => {
    const value = String(filter.value);
    if (value.includes(',')) return undefined;
    return sql`${prompts.id} IN (SELECT ${promptTools.promptId} FROM ${promptTools}
      JOIN ${tools} ON ${tools.id} = ${promptTools.toolId}
      WHERE ${tools.organizationId} = ${organizationId} AND ${contains(tools.name, value)})`;
  };
}

/** A prompt row with what its item computes in SQL. */
const PROMPT_ROW = { ...getTableColumns(prompts), agentCount: AGENT_COUNT, toolNames: TOOL_NAMES };

type StoredPrompt = Omit<PromptRow, 'toolIds'>;

export async function listPrompts(
  db: Db,
  organizationId: number,
  query: ListQuery<PromptProperty>,
  { withTools }: { withTools: boolean },
): Promise<PromptPage> {
  const where = and(
    eq(prompts.organizationId, organizationId),
    ...listConditions(query, {
      columns: PROMPT_COLUMNS,
      windowColumn: prompts.lastUpdated,
      either: [prompts.name, prompts.description],
      conditions: { tools: promptsWithToolNamed(organizationId) },
    }),
  );
  const order = listOrder(query, PROMPT_COLUMNS, prompts.id);
  // The page is chosen first and only its rows get the computed columns: SQLite would
  // otherwise compute them for every row it sorts.
  const pageIds = db.orm
    .select({ id: prompts.id })
    .from(prompts)
    .where(where)
    .orderBy(...order)
    .limit(query.limit)
    .offset(query.offset);
  const pageRows =
    query.limit === 0
      ? []
      : db.orm
          .select(PROMPT_ROW)
          .from(prompts)
          .where(inArray(prompts.id, pageIds))
          .orderBy(...order)
          .all();
  const [total] = db.orm.select({ n: count() }).from(prompts).where(where).all();
  const totalCount = total?.n ?? 0;

  if (!withTools) {
    return { rows: pageRows.map((row) => ({ ...row, toolIds: [] })), tools: new Map(), totalCount };
  }
  return { ...withTheirTools(db, organizationId, pageRows), totalCount };
}

/** The organization's prompts with these ids, in id order, with their tools; others are left out. */
export async function findPrompts(
  db: Db,
  organizationId: number,
  ids: readonly number[],
): Promise<PromptsWithTools> {
  const rows = db.orm
    .select(PROMPT_ROW)
    .from(prompts)
    .where(and(eq(prompts.organizationId, organizationId), inArray(prompts.id, [...ids])))
    .orderBy(prompts.id)
    .all();
  return withTheirTools(db, organizationId, rows);
}

function withTheirTools(
  db: Db,
  organizationId: number,
  rows: readonly StoredPrompt[],
): PromptsWithTools {
  if (rows.length === 0) return { rows: [], tools: new Map() };
  const statements = toolStatements(db);
  const links = statements.toolLinks.all(JSON.stringify(rows.map((row) => row.id)));
  const toolIdsOfPrompt = groupBy(
    links,
    (link) => link.promptId,
    (link) => link.toolId,
  );
  const wanted = new Set(links.map((link) => link.toolId));
  for (const row of rows) if (row.sessionEndToolId !== null) wanted.add(row.sessionEndToolId);
  const wantedJson = JSON.stringify([...wanted].sort((a, b) => a - b));

  const linkingPrompts = groupBy(
    statements.linkingPrompts.all(wantedJson, organizationId),
    (row) => row.toolId,
    idName,
  );
  const usingAgents = groupBy(
    statements.usingAgents.all(wantedJson, organizationId),
    (row) => row.toolId,
    idName,
  );
  const tools = new Map<number, ToolRow>();
  for (const tool of statements.tools.all(wantedJson, organizationId)) {
    tools.set(tool.id, {
      ...tool,
      definition: JSON.parse(tool.definition) as ToolRow['definition'],
      linkedPrompts: linkingPrompts.get(tool.id) ?? [],
      usingAgents: usingAgents.get(tool.id) ?? [],
    });
  }
  return {
    rows: rows.map((row) => ({ ...row, toolIds: toolIdsOfPrompt.get(row.id) ?? [] })),
    tools,
  };
}
