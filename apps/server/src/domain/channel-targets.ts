// The channel targets list: which properties it has and how each is searched (list-query.ts does
// the rest).

import type { components } from '../spec-types.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type { ChannelTargetProperty } from '../vocabulary/directory.js';
import { keyedById, type ListResource, type NullableKeys } from './list-query.js';

export const CHANNEL_TARGET_LIST: ListResource<ChannelTargetProperty> = {
  name: 'channel_targets',
  kinds: {
    id: 'integer',
    channel_id: 'integer',
    channel_name: 'text',
    target: 'text',
    target_mode: 'text',
    agent_id: 'integer',
    is_agent_test: 'boolean',
  },
  ...keyedById(),
  nullable: everyValueOf<
    NullableKeys<components['schemas']['ChannelTarget']> & ChannelTargetProperty
  >()(['agent_id']),
};
