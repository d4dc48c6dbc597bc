// The agents list: which properties it has and how each is searched (list-query.ts does the rest).

import type { components } from '../generated/openapi-types.js';
import type { ListResource } from './list-query.js';

export type AgentProperty = components['schemas']['AgentProperties'];

export const AGENT_LIST: ListResource<AgentProperty> = {
  name: 'agents',
  kinds: {
    id: 'integer',
    name: 'text',
    name_exact: 'exact',
    prompt_id: 'integer',
    pinned_prompt_version: 'integer',
  },
  projects: { name_exact: ['name'] },
  alwaysIncluded: ['id'],
  defaultOrder: { property: 'id', direction: 'asc' },
};
