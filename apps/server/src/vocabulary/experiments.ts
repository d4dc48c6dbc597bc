// The names an experiment's rules (domain/experiments.ts) and its repositories both use: the
// list's properties, the statuses, why a run ended, and what a history entry holds.

import type { components } from '../spec-types.js';

export type ExperimentProperty = components['schemas']['ExperimentProperties'];

export type ExperimentStatus = components['schemas']['ExperimentStatus'];

export type EndedReason = NonNullable<components['schemas']['Experiment']['ended_reason']>;

/** The history pages like the other lists, newest first, with nothing to search or order by. */
export type ExperimentChangeProperty = 'id';

export type ChangeAction = components['schemas']['ExperimentChangeAction'];

/** Who changed an experiment: an API key (through the API), the operator's CLI, or a planned end. */
export type ChangeActor =
  { type: 'api_key'; keyId: string; keyName: string } | { type: 'operator' } | { type: 'system' };

/** Each changed field with its value before and after. */
export type FieldChanges = Record<string, { from: unknown; to: unknown }>;
