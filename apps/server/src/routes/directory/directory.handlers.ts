import type { RouteHandler } from '@hono/zod-openapi';
import {
  listAgents,
  listChannelTargets,
  type AgentRecord,
  type ChannelTargetRecord,
} from '../../db/repositories/directory.js';
import { AGENT_LIST } from '../../domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../domain/channel-targets.js';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import type { AppEnv } from '../../http/app-env.js';
import type * as routes from './directory.routes.js';

const toWireAgent = (agent: AgentRecord) => ({
  id: agent.id,
  name: agent.name,
  prompt_id: agent.promptId,
  pinned_prompt_version: agent.pinnedPromptVersion,
});

type WireAgent = ReturnType<typeof toWireAgent>;

const toWireChannelTarget = (target: ChannelTargetRecord) => ({
  id: target.id,
  channel_id: target.channelId,
  channel_name: target.channelName,
  target: target.target,
  target_mode: target.targetMode,
  agent_id: target.agentId,
  is_agent_test: target.isAgentTest,
});

type WireChannelTarget = ReturnType<typeof toWireChannelTarget>;

export const agentsList: RouteHandler<typeof routes.agentsList, AppEnv> = async (c) => {
  const { organizationId } = c.get('auth');
  const query = parseListQuery(AGENT_LIST, c.req.valid('query'), organizationId);
  const { records, totalCount, next } = await listAgents(c.get('db'), organizationId, query);
  const items = records.map((record) =>
    projectItem<WireAgent, 'id'>(toWireAgent(record), query.projection),
  );
  return c.json(listPage(items, query, totalCount, next), 200);
};

export const channelTargetsList: RouteHandler<typeof routes.channelTargetsList, AppEnv> = async (
  c,
) => {
  const { organizationId } = c.get('auth');
  const query = parseListQuery(CHANNEL_TARGET_LIST, c.req.valid('query'), organizationId);
  const { records, totalCount, next } = await listChannelTargets(
    c.get('db'),
    organizationId,
    query,
  );
  const items = records.map((record) =>
    projectItem<WireChannelTarget, 'id'>(toWireChannelTarget(record), query.projection),
  );
  return c.json(listPage(items, query, totalCount, next), 200);
};
