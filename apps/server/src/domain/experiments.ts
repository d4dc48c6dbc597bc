// Experiment rules (docs/decisions.md sections 6 and 9), free of HTTP and storage: the
// variant-set rules, the life cycle, the warnings given at start, planned ends, and what the
// history records of a change (who made it, which fields it changed from what to what).

import type { components } from '../spec-types.js';
import {
  InputRuleError,
  StateConflictError,
  type InputLocation,
  type InputProblem,
} from './errors.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type {
  ChangeActor,
  EndedReason,
  ExperimentChangeProperty,
  ExperimentProperty,
  ExperimentStatus,
  FieldChanges,
} from '../vocabulary/experiments.js';
import { keyedById, type ListResource, type NullableKeys } from './list-query.js';

export const EXPERIMENT_LIST: ListResource<ExperimentProperty> = {
  name: 'experiments',
  kinds: {
    id: 'integer',
    name: 'text',
    name_exact: 'exact',
    description: 'text',
    status: 'text',
    target_id: 'integer',
    agent_id: 'integer',
    created_at: 'datetime',
    updated_at: 'datetime',
    started_at: 'datetime',
    stopped_at: 'datetime',
  },
  projects: { name_exact: ['name'], agent_id: ['variants'] },
  ...keyedById(),
  nullable: everyValueOf<NullableKeys<components['schemas']['Experiment']> & ExperimentProperty>()([
    'description',
    'started_at',
    'stopped_at',
  ]),
};

export interface VariantInput {
  name: string;
  weight: number;
  is_control?: boolean | undefined;
  agent_id: number;
}

/** What the rules across variants read of a variant; `agent` is an id or any other unique key. */
export interface VariantShape {
  name: string;
  weight: number;
  is_control?: boolean | undefined;
  agent: number | string;
}

const TOTAL_WEIGHT = 100;

/**
 * The rules a variant set must follow on create and update (and in `agentline load`, where
 * agents are named). Types and ranges (2 to 10 variants, weights 1 to 99) are the schema's job;
 * these are the rules across variants. `at` is where the variant list is in the input.
 */
export function variantSetProblems(
  variants: readonly VariantShape[],
  at: InputLocation = ['body', 'variants'],
): InputProblem[] {
  const problems: InputProblem[] = [];
  const total = variants.reduce((sum, v) => sum + v.weight, 0);
  if (total !== TOTAL_WEIGHT) {
    problems.push({
      loc: at,
      msg: `The variant weights total ${total}; they must total ${TOTAL_WEIGHT} (weights are whole percentages of the target's traffic).`,
      type: 'value_error',
    });
  }
  const controls = variants.filter((v) => v.is_control === true).length;
  if (controls !== 1) {
    problems.push({
      loc: at,
      msg: `Exactly one variant must have is_control: true; ${controls} do.`,
      type: 'value_error',
    });
  }
  const firstIndexOfAgent = new Map<number | string, number>();
  const firstIndexOfName = new Map<string, number>();
  variants.forEach((variant, index) => {
    const agentSeenAt = firstIndexOfAgent.get(variant.agent);
    if (agentSeenAt === undefined) firstIndexOfAgent.set(variant.agent, index);
    else {
      problems.push({
        loc: [...at, index, typeof variant.agent === 'number' ? 'agent_id' : 'agent'],
        msg: `Agent ${typeof variant.agent === 'string' ? `"${variant.agent}"` : variant.agent} is already used by variant ${agentSeenAt}; each variant must use a different agent.`,
        type: 'value_error',
      });
    }
    const nameSeenAt = firstIndexOfName.get(variant.name);
    if (nameSeenAt === undefined) firstIndexOfName.set(variant.name, index);
    else {
      problems.push({
        loc: [...at, index, 'name'],
        msg: `The name "${variant.name}" is already used by variant ${nameSeenAt}; variant names must be unique within the experiment.`,
        type: 'value_error',
      });
    }
  });
  return problems;
}

/** What the rules need to know about the target an experiment splits. */
export interface TargetFacts {
  id: number;
  isAgentTest: boolean;
}

/** The target rules; `at` is where the target is named in the input. */
export function targetProblems(
  targetId: number,
  target: TargetFacts | null,
  at: InputLocation = ['body', 'target_id'],
): InputProblem[] {
  if (!target) {
    return [
      {
        loc: at,
        msg: `There is no channel target ${targetId} in this organization; use the id of one of your channel targets.`,
        type: 'value_error',
      },
    ];
  }
  if (target.isAgentTest) {
    return [
      {
        loc: at,
        msg: `Channel target ${targetId} is a built-in agent-test target, which experiments do not support; choose a live target.`,
        type: 'value_error',
      },
    ];
  }
  return [];
}

/** Problems for the variants whose agent is not among the organization's agents. */
export function missingAgentProblems(
  variants: readonly VariantInput[],
  existingAgentIds: ReadonlySet<number>,
): InputProblem[] {
  return variants.flatMap((variant, index) =>
    existingAgentIds.has(variant.agent_id)
      ? []
      : [
          {
            loc: ['body', 'variants', index, 'agent_id'],
            msg: `There is no agent ${variant.agent_id} in this organization; use the id of one of your agents.`,
            type: 'value_error',
          },
        ],
  );
}

/** An experiment keeps its target for life: a change is refused, naming where it was asked. */
export function targetChangeProblems(
  currentTargetId: number,
  requestedTargetId: number | undefined,
  at: InputLocation,
): InputProblem[] {
  if (requestedTargetId === undefined || requestedTargetId === currentTargetId) return [];
  return [
    {
      loc: at,
      msg: `The target of an experiment cannot change (it is ${currentTargetId}); keep it, or create a new experiment for target ${requestedTargetId}.`,
      type: 'value_error',
    },
  ];
}

// The life cycle (docs/decisions.md section 6): draft -> running -> stopped; update and start only in draft,
// stop only while running, delete in draft or stopped.

/** Only a draft can be changed: updated through the API, or replaced by `agentline load`. */
export function isChangeable(status: ExperimentStatus): boolean {
  return status === 'draft';
}

export function assertCanUpdate(id: number, status: ExperimentStatus): void {
  if (!isChangeable(status)) {
    throw new StateConflictError(
      `Experiment ${id} is ${status}; only draft experiments can be updated. Create a new experiment instead.`,
    );
  }
}

export function assertCanStart(id: number, status: ExperimentStatus): void {
  if (status === 'running') {
    throw new StateConflictError(`Experiment ${id} is already running.`);
  }
  if (status === 'stopped') {
    throw new StateConflictError(
      `Experiment ${id} is stopped, and a stopped experiment cannot be restarted. Create a new experiment instead.`,
    );
  }
}

/**
 * Everything a start checks, in order: the life cycle, a planned end still ahead, then the
 * target, which an operator may have turned into an agent-test target since the draft was
 * written. Run inside the start's transaction, so nothing changes between the check and the start.
 */
export function assertStartable(
  experiment: { id: number; status: ExperimentStatus; targetId: number; endAt: string | null },
  target: TargetFacts | null,
  now: string,
): void {
  assertCanStart(experiment.id, experiment.status);
  if (experiment.endAt !== null && experiment.endAt <= now) {
    throw new StateConflictError(
      `Experiment ${experiment.id} has an end_at (${experiment.endAt}) that has passed, so it would end as it starts; set a later end_at, or null, with PUT /api/v1/experiments/${experiment.id} first.`,
    );
  }
  const problems = targetProblems(experiment.targetId, target, ['path', 'experiment_id']);
  if (problems.length > 0) throw new InputRuleError(problems);
}

export function assertCanStop(id: number, status: ExperimentStatus): void {
  if (status !== 'running') {
    throw new StateConflictError(
      `Experiment ${id} is ${status}; only a running experiment can be stopped.`,
    );
  }
}

export function assertCanDelete(id: number, status: ExperimentStatus): void {
  if (status === 'running') {
    throw new StateConflictError(
      `Experiment ${id} is running; stop it (POST /api/v1/experiments/${id}/stop) before deleting it.`,
    );
  }
}

export function anotherRunningConflict(
  targetId: number,
  running: { id: number; name: string },
): StateConflictError {
  return new StateConflictError(
    `Experiment ${running.id} ("${running.name}") is already running on channel target ${targetId}, and only one experiment can run on a target at a time; stop it first.`,
  );
}

/** What start warnings need to know about a variant's agent. */
export interface VariantAgentFacts {
  variantName: string;
  agentId: number;
  agentName: string;
  pinnedPromptVersion: number | null;
  /** Ids of the error-severity validation issues of the agent's prompt. */
  promptErrorIssueIds: readonly string[];
}

/** Warnings that do not prevent a start but may spoil the experiment's comparison. */
export function startWarnings(variants: readonly VariantAgentFacts[]): string[] {
  const warnings: string[] = [];
  for (const v of variants) {
    const agent = `agent "${v.agentName}" (${v.agentId})`;
    if (v.pinnedPromptVersion === null) {
      warnings.push(
        `Variant "${v.variantName}": ${agent} does not pin a prompt version, so a prompt edit during the experiment changes what this variant measures.`,
      );
    }
    if (v.promptErrorIssueIds.length > 0) {
      warnings.push(
        `Variant "${v.variantName}": the prompt of ${agent} has error-level validation issues (${v.promptErrorIssueIds.join(', ')}).`,
      );
    }
  }
  return warnings;
}

// Planned ends (docs/decisions.md section 9): a running experiment ends by itself when its
// end_at comes or when it has routed max_sessions sessions.

/** What a planned end reads of a running experiment. Timestamps are canonical ISO text. */
export interface PlannedEnd {
  endAt: string | null;
  maxSessions: number | null;
  routedSessions: number;
}

/**
 * Why a running experiment takes no more sessions at `now`, or null while it does. An end_at
 * that has come wins: its moment is the earlier one.
 */
export function dueEnd(plan: PlannedEnd, now: string): Exclude<EndedReason, 'stopped'> | null {
  if (plan.endAt !== null && plan.endAt <= now) return 'end_at';
  if (plan.maxSessions !== null && plan.routedSessions >= plan.maxSessions) return 'max_sessions';
  return null;
}

/**
 * An experiment as it reads at `now`: one running past its end_at is stopped from end_at on,
 * whether or not routing or the sweep has stored that yet.
 */
export function asOf<
  E extends PlannedEnd & {
    status: ExperimentStatus;
    stoppedAt: string | null;
    endedReason: EndedReason | null;
  },
>(experiment: E, now: string): E {
  if (experiment.status !== 'running' || dueEnd(experiment, now) !== 'end_at') return experiment;
  return { ...experiment, status: 'stopped', stoppedAt: experiment.endAt, endedReason: 'end_at' };
}

// History (docs/decisions.md section 9): who made a change, and what it changed.

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
    ...keyedById('desc'),
    nullable: everyValueOf<
      NullableKeys<components['schemas']['ExperimentChange']> & ExperimentChangeProperty
    >()([]),
  };
}
