// The property names of the directory's lists (agents, channel targets), which their rules
// (domain/agents.ts, domain/channel-targets.ts) and the directory repository both name.

import type { components } from '../spec-types.js';

export type AgentProperty = components['schemas']['AgentProperties'];

export type ChannelTargetProperty = components['schemas']['ChannelTargetProperties'];
