// The events list's property names, which its rules (domain/events.ts), the events repository, the
// import and the live feed all name.

import * as enumValues from '../generated/enum-values.js';
import type { components } from '../spec-types.js';

export type EventProperty = components['schemas']['EventProperties'];

/** Every event property, in the order an item lists them. */
export const EVENT_PROPERTIES = enumValues.EventProperties;
