// Agents and channel targets as the API lists them; `agentline list --json` prints the same.

import type { AgentRecord, ChannelTargetRecord } from '../../db/repositories/directory.js';

export const toWireAgent = (agent: AgentRecord) => ({
  id: agent.id,
  name: agent.name,
  prompt_id: agent.promptId,
  pinned_prompt_version: agent.pinnedPromptVersion,
});

export type WireAgent = ReturnType<typeof toWireAgent>;

export const toWireChannelTarget = (target: ChannelTargetRecord) => ({
  id: target.id,
  channel_id: target.channelId,
  channel_name: target.channelName,
  target: target.target,
  target_mode: target.targetMode,
  agent_id: target.agentId,
  is_agent_test: target.isAgentTest,
});

export type WireChannelTarget = ReturnType<typeof toWireChannelTarget>;
