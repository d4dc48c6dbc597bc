// The read-only lists of what experiments and session routing refer to: the organization's
// agents and channel targets. Both are plain tables read with the shared list SQL, through one
// reader, on either database.

import { and, eq, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { AgentProperty } from '../../domain/agents.js';
import type { ChannelTargetProperty } from '../../domain/channel-targets.js';
import type { ListPosition, ListQuery } from '../../domain/list-query.js';
import type { Db } from '../client.js';
import { listConditions, listOrder, pageWindow, splitPage, type ColumnMap } from '../list-sql.js';
import { runSteps, selectList, selectRows } from '../portable-sql.js';
import { agents, channels, channelTargets } from '../schema.js';

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

export interface ListedPage<R> {
  records: R[];
  totalCount: number;
  next: ListPosition | null;
}

interface ListSource<P extends string> {
  /** FROM clause: the table, with what it joins. */
  from: SQL;
  organizationColumn: SQLWrapper;
  primaryKey: SQLWrapper;
  columns: ColumnMap<P>;
  /** The record's fields (camelCase aliases) and the SQL each is read from. */
  fields: Record<string, SQLWrapper>;
}

/** One page and the total count of a list over one organization's rows of a plain table. */
async function listRows<P extends string, R>(
  db: Db,
  source: ListSource<P>,
  organizationId: number,
  query: ListQuery<P>,
): Promise<{ rows: R[]; totalCount: number; next: ListPosition | null }> {
  const where = and(
    eq(source.organizationColumn, organizationId),
    ...listConditions(query, { columns: source.columns, dialect: db.kind }),
  );
  const order = listOrder(query, source.columns, source.primaryKey, db.kind);
  const { after, limitOffset } = pageWindow(query, source.columns, source.primaryKey);
  const sortKey = source.columns[query.order.property];
  return runSteps(db, function* () {
    const read =
      query.limit === 0
        ? []
        : yield* selectRows<R & { id: number; sortKey: unknown }>(
            sql`SELECT ${selectList({ ...source.fields, sortKey })} FROM ${source.from}
              WHERE ${and(where, after)} ORDER BY ${sql.join(order, sql`, `)} ${limitOffset}`,
          );
    const { rows, next } = splitPage(read, query.limit);
    const [total] = yield* selectRows<{ n: number }>(
      sql`SELECT count(*) AS "n" FROM ${source.from} WHERE ${where}`,
    );
    return { rows: rows as R[], totalCount: Number(total?.n ?? 0), next };
  });
}

const AGENTS: ListSource<AgentProperty> = {
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
  const { rows, totalCount, next } = await listRows<AgentProperty, AgentRecord>(
    db,
    AGENTS,
    organizationId,
    query,
  );
  return { records: rows, totalCount, next };
}

const CHANNEL_TARGETS: ListSource<ChannelTargetProperty> = {
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
  const { rows, totalCount, next } = await listRows<
    ChannelTargetProperty,
    ChannelTargetRecord & { isAgentTest: unknown }
  >(db, CHANNEL_TARGETS, organizationId, query);
  // 0 or 1 on SQLite, a boolean on PostgreSQL.
  return {
    records: rows.map((row) => ({ ...row, isAgentTest: Boolean(row.isAgentTest) })),
    totalCount,
    next,
  };
}
