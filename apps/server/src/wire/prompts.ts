// The one place prompt and tool rows become wire objects; their validation issues come from the
// domain (prompt-validation.ts), which experiment start warnings read as well.

import { storedPromptIssues, storedToolIssues } from '../domain/prompt-validation.js';
import { completeToolDefinition } from '../domain/prompts.js';
import type { PromptRow, ToolRow } from '../db/repositories/prompts.js';
import type { components } from '../spec-types.js';

export type WireTool = components['schemas']['Tool'];
export type WirePrompt = Required<components['schemas']['Prompt']>;

function toWireTool(row: ToolRow): WireTool {
  return {
    id: row.id,
    name: row.name,
    service_id: row.serviceId,
    service_name: row.serviceName,
    version_number: row.versionNumber,
    last_updated: row.lastUpdated,
    last_updated_by: row.lastUpdatedBy,
    last_updated_comments: row.lastUpdatedComments,
    prompts_info: row.linkedPrompts,
    agents_info: row.usingAgents,
    validation_issues: storedToolIssues(row),
    definition: completeToolDefinition(row.definition),
  };
}

/** A prompt row as a wire Prompt, its tools taken from `tools` by id. */
export function toWirePrompt(row: PromptRow, tools: ReadonlyMap<number, WireTool>): WirePrompt {
  const toolsFull = row.toolIds.flatMap((id) => tools.get(id) ?? []);
  const sessionEndTool =
    row.sessionEndToolId === null ? null : (tools.get(row.sessionEndToolId) ?? null);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    description: row.description,
    context: row.context,
    // `agentline load` admits only the spec's providers, so the stored text is one of them.
    llm_config: row.llmConfig as WirePrompt['llm_config'],
    tools: row.toolNames,
    session_end_enabled: row.sessionEndEnabled,
    session_end_tool_id: row.sessionEndToolId,
    session_end_tool: sessionEndTool,
    tools_full: toolsFull,
    agent_count: row.agentCount,
    version_number: row.versionNumber,
    edit_comments: row.editComments,
    last_updated: row.lastUpdated,
    last_updated_by: row.lastUpdatedBy,
    validation_issues: storedPromptIssues(row, (id) => {
      const tool = tools.get(id);
      return tool && { id: tool.id, name: tool.name, issues: tool.validation_issues };
    }),
  };
}

export function toWireTools(rows: ReadonlyMap<number, ToolRow>): Map<number, WireTool> {
  return new Map([...rows].map(([id, row]) => [id, toWireTool(row)]));
}
