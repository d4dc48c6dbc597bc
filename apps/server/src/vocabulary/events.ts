// The events list's property names, which its rules (domain/events.ts), the events repository, the
// import and the live feed all name.

import type { components } from '../spec-types.js';
import { everyValueOf } from './spec-enums.js';

export type EventProperty = components['schemas']['EventProperties'];

/** Every event property, in the order an item lists them. */
export const EVENT_PROPERTIES = everyValueOf<EventProperty>()([
  'timestamp',
  'session_id',
  'conversation_id',
  'source',
  'source_id',
  'category',
  'type',
  'user_id',
  'description',
  'attributes',
]);
