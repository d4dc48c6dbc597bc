// An experiment's change history (docs/decisions.md section 9), free of HTTP and storage: who
// made a change, and which fields it changed from what to what.

import type { components } from '../spec-types.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type {
  ChangeActor,
  ExperimentChangeProperty,
  ExperimentStatus,
  FieldChanges,
} from '../vocabulary/experiments.js';
import type { ListResource, NullableKeys } from './list-query.js';

/** Who made a change, and the API call it came with (null outside the API). */
export interface ChangeAuthor {
  actor: ChangeActor;
  requestId: string | null;
}

/** The operator's CLI as the author of a change (`agentline load`). */
export const OPERATOR: ChangeAuthor = { actor: { type: 'operator' }, requestId: null };

/** The service itself as the author of a change: a planned end. */
export const SYSTEM: ChangeAuthor = { actor: { type: 'system' }, requestId: null };

/** What `last_updated_by` shows for a change the operator made. */
const OPERATOR_NAME = 'agentline load';

/** The name an experiment's `last_updated_by` shows for the author of a change. */
export function lastUpdatedByName(author: ChangeAuthor): string {
  return author.actor.type === 'api_key' ? author.actor.keyName : OPERATOR_NAME;
}

export type ChangedVariant = components['schemas']['ChangedVariant'];

/** The fields of an experiment that its history follows, as the wire names them. */
export interface ExperimentState {
  name: string;
  description: string | null;
  variants: ChangedVariant[];
  end_at: string | null;
  max_sessions: number | null;
  status: ExperimentStatus;
}

const FIELDS = [
  'name',
  'description',
  'variants',
  'end_at',
  'max_sessions',
  'status',
] as const satisfies ReadonlyArray<keyof ExperimentState>;

/**
 * Each field whose value differs between `before` and `after`, with both values; null stands for
 * the side where the experiment does not exist (before a creation, after a deletion).
 */
export function fieldChanges(
  before: ExperimentState | null,
  after: ExperimentState | null,
): FieldChanges {
  const changes: FieldChanges = {};
  for (const field of FIELDS) {
    const from = before?.[field] ?? null;
    const to = after?.[field] ?? null;
    // Values are JSON built in one key order (stateOf), so equal text is an equal value.
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}

/** What the history records of an experiment, from a record in any layer's naming. */
export function stateOf(experiment: {
  name: string;
  description: string | null;
  status: ExperimentStatus;
  endAt: string | null;
  maxSessions: number | null;
  variants: ReadonlyArray<{ name: string; weight: number; isControl: boolean; agentId: number }>;
}): ExperimentState {
  return {
    name: experiment.name,
    description: experiment.description,
    variants: experiment.variants.map((v) => ({
      name: v.name,
      weight: v.weight,
      is_control: v.isControl,
      agent_id: v.agentId,
    })),
    end_at: experiment.endAt,
    max_sessions: experiment.maxSessions,
    status: experiment.status,
  };
}

export function experimentHistoryList(
  experimentId: number,
): ListResource<ExperimentChangeProperty> {
  return {
    name: `experiment_history:${experimentId}`,
    kinds: { id: 'integer' },
    alwaysIncluded: ['id'],
    defaultOrder: { property: 'id', direction: 'desc' },
    nullable: everyValueOf<
      NullableKeys<components['schemas']['ExperimentChange']> & ExperimentChangeProperty
    >()([]),
    ids: 'integer',
  };
}
