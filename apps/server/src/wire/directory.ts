// Agents and channel targets as the API lists them (shapes from the spec's generated types, with
// every property present in a full item); `agentline list --json` prints the same.

import type { AgentRecord, ChannelTargetRecord } from '../db/repositories/directory.js';
import type { components } from '../spec-types.js';

export type WireAgent = Required<components['schemas']['Agent']>;
export type WireChannelTarget = Required<components['schemas']['ChannelTarget']>;

export const toWireAgent = (agent: AgentRecord): WireAgent => ({
  id: agent.id,
  name: agent.name,
  prompt_id: agent.promptId,
  pinned_prompt_version: agent.pinnedPromptVersion,
});

export const toWireChannelTarget = (target: ChannelTargetRecord): WireChannelTarget => ({
  id: target.id,
  channel_id: target.channelId,
  channel_name: target.channelName,
  target: target.target,
  target_mode: target.targetMode,
  agent_id: target.agentId,
  is_agent_test: target.isAgentTest,
});
