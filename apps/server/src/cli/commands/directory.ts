// What an operator (or an API customer's admin) needs to write an experiment: the ids of the
// organization's agents and channel targets, as the API lists them.

import type { Db } from '../../db/client.js';
import {
  listAgents,
  listChannelTargets,
  type ListedPage,
} from '../../db/repositories/directory.js';
import { AGENT_LIST } from '../../domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../domain/channel-targets.js';
import {
  encodeCursor,
  parseListQuery,
  type ListQuery,
  type ListResource,
} from '../../domain/list-query.js';
import { stringOption, type Command } from '../command.js';
import { formatTable } from '../table.js';

/** Every record of a list, by id, following its cursors a thousand at a time. */
async function everyRecord<P extends string, R>(
  db: Db,
  organizationId: number,
  resource: ListResource<P>,
  list: (db: Db, organizationId: number, query: ListQuery<P>) => Promise<ListedPage<R>>,
): Promise<R[]> {
  const records: R[] = [];
  let cursor: string | undefined;
  for (;;) {
    const query = parseListQuery(
      resource,
      { page: 0, limit: 1000, search_fields: [], search_field_values: [], fields: [], cursor },
      organizationId,
    );
    const page = await list(db, organizationId, query);
    records.push(...page.records);
    if (!page.next) return records;
    cursor = encodeCursor(query, page.next);
  }
}

const orgOption = {
  optionHelp: [['--org <id|name>', 'the organization']] as Array<[string, string]>,
  options: { org: { type: 'string' as const } },
  requiredOptions: ['org'],
};

export const agentsListCommand: Command = {
  words: ['agents', 'list'],
  positionals: [],
  summary: "List an organization's agents: the agent ids an experiment's variants name.",
  ...orgOption,
  async run(context, values) {
    const organization = await context.organization(stringOption(values, 'org'));
    const agents = await everyRecord(await context.db(), organization.id, AGENT_LIST, listAgents);
    if (agents.length === 0) {
      context.note(
        `organization "${organization.name}" has no agents yet; add them with "agentline load"`,
      );
      return;
    }
    const rows = [
      ['ID', 'NAME', 'PROMPT ID', 'PINNED VERSION'],
      ...agents.map((agent) => [
        String(agent.id),
        agent.name,
        agent.promptId === null ? '-' : String(agent.promptId),
        agent.pinnedPromptVersion === null ? 'latest' : String(agent.pinnedPromptVersion),
      ]),
    ];
    for (const line of formatTable(rows)) context.out(line);
  },
};

export const targetsListCommand: Command = {
  words: ['targets', 'list'],
  positionals: [],
  summary: "List an organization's channel targets: the target ids experiments and routing name.",
  ...orgOption,
  async run(context, values) {
    const organization = await context.organization(stringOption(values, 'org'));
    const targets = await everyRecord(
      await context.db(),
      organization.id,
      CHANNEL_TARGET_LIST,
      listChannelTargets,
    );
    if (targets.length === 0) {
      context.note(
        `organization "${organization.name}" has no channel targets yet; add them with "agentline load"`,
      );
      return;
    }
    const rows = [
      ['ID', 'CHANNEL', 'TARGET', 'MODE', 'AGENT ID', 'AGENT TEST'],
      ...targets.map((target) => [
        String(target.id),
        target.channelName,
        target.target,
        target.targetMode,
        target.agentId === null ? '-' : String(target.agentId),
        target.isAgentTest ? 'yes' : 'no',
      ]),
    ];
    for (const line of formatTable(rows)) context.out(line);
  },
};
