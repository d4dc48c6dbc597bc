// `agentline load`'s experiments (loader.ts): a draft created or replaced by name under
// the API's rules for a target, a replaced draft and a fixed target (domain/experiments.ts), with
// the operator's history entry, inside the load's transaction.

import type { Steps } from '../db/engine/portable-sql.js';
import {
  experimentsNamed,
  experimentTarget,
  insertExperimentRow,
  replaceVariants,
  readExperiment,
  updateExperimentRow,
} from '../db/repositories/experiments.js';
import {
  fieldChanges,
  isChangeable,
  lastUpdatedByName,
  OPERATOR,
  stateOf,
  targetChangeProblems,
  targetProblems,
} from '../domain/experiments.js';
import type { JsonPath, PlatformRecords } from './format.js';
import { duplicateKeyMessage, type RecordProblem } from './load-result.js';
import { recordChange } from '../use-cases/experiment-changes.js';

/** An experiment of the records file, its target and agents resolved (null: not found). */
export interface ExperimentToLoad {
  experiment: PlatformRecords['experiments'][number];
  targetId: number;
  agentIds: ReadonlyArray<number | null>;
}

/**
 * Creates or replaces the organization's draft named like `experiment`; `path` is where the file
 * lists it. The problems when a rule refuses it, else its id and whether it was created.
 */
export function* loadExperiment(
  organizationId: number,
  now: string,
  { experiment, targetId, agentIds }: ExperimentToLoad,
  path: JsonPath,
): Steps<{ problems: RecordProblem[] } | { id: number; action: 'created' | 'updated' }> {
  const target = yield* experimentTarget(organizationId, targetId);
  const named = yield* experimentsNamed(organizationId, experiment.name);
  const [existing] = named;
  if (existing && !isChangeable(existing.status)) {
    const message = `experiment "${experiment.name}" is ${existing.status} and only drafts can be replaced; give this one another name`;
    return { problems: [{ path: [...path, 'name'], message }] };
  }
  const at = [...path, 'target'].map((part) => (typeof part === 'number' ? part : String(part)));
  const problems = [
    ...targetProblems(targetId, target, at),
    ...(existing ? targetChangeProblems(existing.targetId, targetId, at) : []),
  ];
  if (problems.length > 0) {
    return { problems: problems.map((problem) => ({ path: problem.loc, message: problem.msg })) };
  }
  if (named.length > 1) {
    const message = duplicateKeyMessage('experiment', named.length, experiment.name);
    return { problems: [{ path, message }] };
  }
  const stored = existing && (yield* readExperiment(organizationId, existing.id));
  const before = stored ? stateOf(stored) : null;
  const fields = {
    name: experiment.name,
    description: experiment.description,
    targetId,
    updatedAt: now,
    lastUpdatedBy: lastUpdatedByName(OPERATOR),
  };
  const action = existing ? 'updated' : 'created';
  // An agent not found is a problem the load reports, and then it writes nothing.
  const variants = agentIds.includes(null)
    ? null
    : experiment.variants.map((variant, position) => ({
        name: variant.name,
        weight: variant.weight,
        isControl: variant.is_control,
        agentId: agentIds[position]!,
      }));
  let id: number;
  if (existing) {
    id = existing.id;
    yield* updateExperimentRow(id, fields);
    if (variants) yield* replaceVariants(id, variants);
  } else {
    // The load's one moment, not the database's clock at the insert, which runs later: a new
    // experiment would otherwise be updated before it was created.
    id = yield* insertExperimentRow({ ...fields, createdAt: now, organizationId }, variants ?? []);
  }
  if (!variants) return { id, action };
  // The operator's change goes into the history in the load's transaction, as an API change
  // does; loading a draft again unchanged is no change and leaves no entry.
  const after = stateOf((yield* readExperiment(organizationId, id))!);
  if (before && Object.keys(fieldChanges(before, after)).length === 0) return { id, action };
  yield* recordChange(organizationId, id, now, action, OPERATOR, before, after);
  return { id, action };
}
