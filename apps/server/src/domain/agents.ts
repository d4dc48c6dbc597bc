// The agents list: which properties it has and how each is searched (list-query.ts does the rest).

import type { components } from '../spec-types.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type { AgentProperty } from '../vocabulary/directory.js';
import { keyedById, type ListResource, type NullableKeys } from './list-query.js';

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
  ...keyedById(),
  nullable: everyValueOf<NullableKeys<components['schemas']['Agent']> & AgentProperty>()([
    'prompt_id',
    'pinned_prompt_version',
  ]),
};
