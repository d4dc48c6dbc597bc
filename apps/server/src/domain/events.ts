// How the events list searches and orders (docs/decisions.md sections 2 and 3).

import type { components } from '../spec-types.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type { EventProperty } from '../vocabulary/events.js';
import type { ListResource, NullableKeys } from './list-query.js';

export const EVENT_LIST: ListResource<EventProperty> = {
  name: 'events',
  kinds: {
    timestamp: 'datetime',
    // Identifiers are looked up, not browsed: a substring of a session id is not a useful search,
    // and exact equality is what an index serves at a million events.
    session_id: 'exact',
    conversation_id: 'exact',
    source_id: 'exact',
    user_id: 'exact',
    source: 'text',
    category: 'text',
    type: 'text',
    description: 'text',
    attributes: 'json',
  },
  alwaysIncluded: ['timestamp'],
  defaultOrder: { property: 'timestamp', direction: 'desc' },
  nullable: everyValueOf<NullableKeys<components['schemas']['Event']> & EventProperty>()([
    'session_id',
    'conversation_id',
    'source',
    'source_id',
    'category',
    'type',
    'user_id',
    'description',
    'attributes',
  ]),
  ids: 'bigint',
};
