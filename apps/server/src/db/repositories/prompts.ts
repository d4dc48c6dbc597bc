// Reading the prompts list. Prompts, tools, services and agents are written by `agentline load`
// and `agentline demo`. A page costs the same number of queries whatever its size: the page and
// its count, then (when the items show tools) one more for the whole page at once: its prompts'
// tools, each with the prompts linking it and the agents using those prompts. The page and its
// count are the shared list reader's (selectListPage); the tools' read is each backend's own, as
// its plan is. All three are one list read (runListRead): one snapshot, within the list query
// timeout.

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

// The read of a page's tools: the tools its prompts link or end their sessions with, each with the
// prompts linking it and the agents using those prompts, as JSON arrays, in one statement (on
// PostgreSQL one round trip and one plan). A prompt's own tool ids are the linked prompts' entries
// of the page's prompts. SQLite gets the ids as JSON lists (one statement text whatever their
// number, so it stays prepared) and keeps tables joined with CROSS JOIN in the written order: these
// start from those few ids and reach the rest by index, instead of walking the organization's rows
// to find them (which its planner may choose, not knowing how few ids there are). NOT INDEXED
// leaves a prompt only its primary key: an index on the organization would otherwise look covering
// enough to be walked once per link. PostgreSQL gets array parameters and plans for the actual ids;
// the wanted ids are one array (ARRAY of the subquery) so that the tools are found through their
// key, where a join of the subquery's estimate was hashed against every tool of the organization.
// Neither backend accepts the other's spelling of these, hence two (docs/architecture.md).
const TOOL_FIELDS = sql`t.id, t.name, t.service_id AS "serviceId", s.name AS "serviceName",
  t.version_number AS "versionNumber", t.definition, t.last_updated AS "lastUpdated",
  t.last_updated_by AS "lastUpdatedBy", t.last_updated_comments AS "lastUpdatedComments"`;

const TOOLS_OF_PROMPTS = {
  sqlite: (promptIds: number[], endToolIds: number[], organizationId: number) =>
    sql`WITH wanted(id) AS (
        SELECT pt.tool_id FROM json_each(${JSON.stringify(promptIds)}) AS listed
        CROSS JOIN prompt_tools AS pt ON pt.prompt_id = listed.value
        UNION SELECT value FROM json_each(${JSON.stringify(endToolIds)}))
      SELECT ${TOOL_FIELDS},
        (SELECT json_group_array(json_object('id', p.id, 'name', p.name) ORDER BY p.id)
          FROM prompt_tools AS pt CROSS JOIN prompts AS p NOT INDEXED ON p.id = pt.prompt_id
          WHERE pt.tool_id = t.id AND p.organization_id = ${organizationId}) AS "linkedPrompts",
        (SELECT json_group_array(json_object('id', a.id, 'name', a.name) ORDER BY a.id)
          FROM prompt_tools AS pt CROSS JOIN agents AS a ON a.prompt_id = pt.prompt_id
          WHERE pt.tool_id = t.id AND a.organization_id = ${organizationId}) AS "usingAgents"
      FROM wanted CROSS JOIN tools AS t ON t.id = wanted.id
      LEFT JOIN services AS s ON s.id = t.service_id AND s.organization_id = t.organization_id
      WHERE t.organization_id = ${organizationId}
      ORDER BY t.id`,
  postgres: (promptIds: number[], endToolIds: number[], organizationId: number) =>
    sql`SELECT ${TOOL_FIELDS},
        COALESCE((SELECT json_agg(json_build_object('id', p.id, 'name', p.name) ORDER BY p.id)
          FROM prompt_tools AS pt JOIN prompts AS p ON p.id = pt.prompt_id
          WHERE pt.tool_id = t.id AND p.organization_id = ${organizationId}), '[]') AS "linkedPrompts",
        COALESCE((SELECT json_agg(json_build_object('id', a.id, 'name', a.name) ORDER BY a.id)
          FROM prompt_tools AS pt JOIN agents AS a ON a.prompt_id = pt.prompt_id
          WHERE pt.tool_id = t.id AND a.organization_id = ${organizationId}), '[]') AS "usingAgents"
      FROM tools AS t
      LEFT JOIN services AS s ON s.id = t.service_id AND s.organization_id = t.organization_id
      WHERE t.id = ANY(ARRAY(
          SELECT tool_id FROM prompt_tools WHERE prompt_id = ANY(${sql.param(promptIds)})
          UNION SELECT unnest(${sql.param(endToolIds)}::integer[])))
        AND t.organization_id = ${organizationId}
      ORDER BY t.id`,
};

/** A tool row as the driver returns it: JSON as text on SQLite, parsed on PostgreSQL. */
type DriverTool = Omit<ToolRow, 'definition' | 'linkedPrompts' | 'usingAgents'> & {
  definition: ToolRow['definition'] | string;
  linkedPrompts: IdName[] | string;
  usingAgents: IdName[] | string;
};

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
  const endToolIds = rows.flatMap((row) => row.sessionEndToolId ?? []);
  const read = TOOLS_OF_PROMPTS[db.kind](
    rows.map((row) => row.id),
    endToolIds,
    organizationId,
  );
  const tools = new Map<number, ToolRow>();
  const toolIdsOfPrompt = new Map<number, number[]>(rows.map((row) => [row.id, []]));
  for (const tool of yield* selectRows<DriverTool>(read)) {
    const linkedPrompts = parsedJson(tool.linkedPrompts);
    tools.set(tool.id, {
      ...tool,
      definition: parsedJson(tool.definition),
      linkedPrompts,
      usingAgents: parsedJson(tool.usingAgents),
    });
    // Tools come in id order, so each prompt's ids do too.
    for (const prompt of linkedPrompts) toolIdsOfPrompt.get(prompt.id)?.push(tool.id);
  }
  return {
    rows: rows.map((row) => ({ ...row, toolIds: toolIdsOfPrompt.get(row.id)! })),
    tools,
  };
}
