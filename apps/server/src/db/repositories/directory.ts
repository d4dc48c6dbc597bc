// The read-only lists of what experiments and session routing refer to: the organization's
// agents and channel targets, plain tables read by the shared list reader (selectListPage) on
// either database; and its channels, which only the operator CLI lists (the API has no channels
// list), so they are read whole, without the list query's paging and search.

import { sql } from 'drizzle-orm';
import type { AgentProperty, ChannelTargetProperty } from '../../vocabulary/directory.js';
import type { ListedPage, ListQuery } from '../../vocabulary/list-query.js';
import type { Db } from '../engine/client.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import { runListRead, runSteps, selectList, selectRows } from '../engine/portable-sql.js';
import {
  agents,
  channels,
  channelTargets,
  telephonyNumbers,
  type ChannelKind,
  type TelephonyProvider,
} from '../schema/sqlite.js';

export interface AgentRecord {
  id: number;
  name: string;
  promptId: number | null;
  pinnedPromptVersion: number | null;
}

export interface ChannelTargetRecord {
  id: number;
  channelId: number;
  channelName: string;
  target: string;
  targetMode: string;
  agentId: number | null;
  isAgentTest: boolean;
}

/** A channel without its provider settings: provider_config and provider_secret are secrets. */
export interface ChannelRecord {
  id: number;
  name: string;
  kind: ChannelKind;
  provider: TelephonyProvider | null;
  targetCount: number;
  numberCount: number;
}

const AGENTS: ListTable<AgentProperty> = {
  from: sql`${agents}`,
  organizationColumn: agents.organizationId,
  primaryKey: agents.id,
  columns: {
    id: agents.id,
    name: agents.name,
    name_exact: agents.name,
    prompt_id: agents.promptId,
    pinned_prompt_version: agents.pinnedPromptVersion,
  },
  fields: {
    id: agents.id,
    name: agents.name,
    promptId: agents.promptId,
    pinnedPromptVersion: agents.pinnedPromptVersion,
  },
};

export async function listAgents(
  db: Db,
  organizationId: number,
  query: ListQuery<AgentProperty>,
): Promise<ListedPage<AgentRecord>> {
  const { rows, totalCount, next } = await runListRead(db, () =>
    selectListPage<AgentProperty, AgentRecord>(AGENTS, organizationId, query, db),
  );
  return { records: rows, totalCount, next };
}

const CHANNEL_TARGETS: ListTable<ChannelTargetProperty> = {
  from: sql`${channelTargets} INNER JOIN ${channels} ON ${channels.id} = ${channelTargets.channelId}`,
  organizationColumn: channelTargets.organizationId,
  primaryKey: channelTargets.id,
  columns: {
    id: channelTargets.id,
    channel_id: channelTargets.channelId,
    channel_name: channels.name,
    target: channelTargets.target,
    target_mode: channelTargets.targetMode,
    agent_id: channelTargets.agentId,
    is_agent_test: channelTargets.isAgentTest,
  },
  fields: {
    id: channelTargets.id,
    channelId: channelTargets.channelId,
    channelName: channels.name,
    target: channelTargets.target,
    targetMode: channelTargets.targetMode,
    agentId: channelTargets.agentId,
    isAgentTest: channelTargets.isAgentTest,
  },
};

export async function listChannelTargets(
  db: Db,
  organizationId: number,
  query: ListQuery<ChannelTargetProperty>,
): Promise<ListedPage<ChannelTargetRecord>> {
  const { rows, totalCount, next } = await runListRead(db, () =>
    selectListPage<ChannelTargetProperty, ChannelTargetRecord & { isAgentTest: unknown }>(
      CHANNEL_TARGETS,
      organizationId,
      query,
      db,
    ),
  );
  // 0 or 1 on SQLite, a boolean on PostgreSQL.
  return {
    records: rows.map((row) => ({ ...row, isAgentTest: Boolean(row.isAgentTest) })),
    totalCount,
    next,
  };
}

/** Every channel of the organization, by id, with how many targets and numbers each has. */
export async function listChannels(db: Db, organizationId: number): Promise<ChannelRecord[]> {
  return runSteps(db, () =>
    selectRows<ChannelRecord>(
      sql`SELECT ${selectList({
        id: channels.id,
        name: channels.name,
        kind: channels.kind,
        provider: channels.provider,
        targetCount: sql`(SELECT count(*) FROM ${channelTargets}
          WHERE ${channelTargets.channelId} = ${channels.id})`,
        numberCount: sql`(SELECT count(*) FROM ${telephonyNumbers}
          WHERE ${telephonyNumbers.channelId} = ${channels.id})`,
      })}
      FROM ${channels} WHERE ${channels.organizationId} = ${organizationId}
      ORDER BY ${channels.id}`,
    ),
  );
}
