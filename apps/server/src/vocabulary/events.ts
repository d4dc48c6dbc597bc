// The name of an events list property, which its rules (domain/events.ts), the events repository,
// the import and the live feed all use. Every property, in the order an item lists them, is
// generated/enum-values.ts's EventProperties.

import type { components } from '../spec-types.js';

export type EventProperty = components['schemas']['EventProperties'];
