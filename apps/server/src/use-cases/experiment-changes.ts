// Every change to an experiment through the API, each in one place: its checks, then one write
// transaction that loads the experiment as it stands, applies the rule (domain/experiments.ts),
// writes, and appends the history entry (docs/architecture.md, "One home per rule").

import type { Db } from '../db/engine/client.js';
import { isUniqueViolation } from '../db/engine/errors.js';
import { runStepsInTransaction, type Steps } from '../db/engine/portable-sql.js';
import type { ExperimentRecord } from '../db/repositories/experiment-records.js';
import {
  deleteExperimentRow,
  deleteVariants,
  experimentTarget,
  findAgentIds,
  findExperimentTarget,
  findRunningOnTargetOf,
  insertExperimentRow,
  insertVariants,
  updateExperimentRow,
  type VariantValues,
} from '../db/repositories/experiments.js';
import { InputRuleError, type InputProblem } from '../domain/errors.js';
import { lastUpdatedByName, stateOf, type ChangeAuthor } from '../domain/experiment-history.js';
import {
  anotherRunningConflict,
  assertCanDelete,
  assertCanStop,
  assertCanUpdate,
  assertStartable,
  missingAgentProblems,
  targetChangeProblems,
  targetProblems,
  variantSetProblems,
  type VariantInput,
} from '../domain/experiments.js';
import { normalizeDateTime, nowIso } from '../domain/timestamps.js';
import type { EndedReason, ExperimentStatus } from '../vocabulary/experiments.js';
import { recordChange } from './experiment-history.js';
import { experimentStartWarnings } from './experiment-start-warnings.js';
import { requireExperimentNow } from './experiment-reads.js';
import { requireExperiment, storeDueEnds } from './planned-ends.js';

/** An experiment as a create or update asks for it. */
export interface ExperimentInput {
  name: string;
  description?: string | null | undefined;
  variants: VariantInput[];
  end_at?: string | null | undefined;
  max_sessions?: number | null | undefined;
}

/** What a create or update stores, once every rule passed. */
interface ExperimentWrite {
  name: string;
  description: string | null;
  endAt: string | null;
  maxSessions: number | null;
  variants: VariantValues[];
}

/** Checks a create or update body against every experiment rule and returns what to store. */
async function checkedWrite(
  db: Db,
  organizationId: number,
  input: ExperimentInput,
  targetProblemsFound: InputProblem[],
): Promise<ExperimentWrite> {
  const agentIds = await findAgentIds(
    db,
    organizationId,
    input.variants.map((v) => v.agent_id),
  );
  // Stored as canonical ISO text, so routing compares it with the clock as text.
  const endAt = input.end_at == null ? null : normalizeDateTime(input.end_at);
  const problems: InputProblem[] = [
    ...targetProblemsFound,
    ...(input.end_at != null && endAt === null
      ? [
          {
            loc: ['body', 'end_at'],
            msg: `"${input.end_at}" is not a date-time between the years 0 and 9999 with a time zone; send ISO 8601 such as 2026-12-31T23:00:00Z.`,
            type: 'datetime_parsing',
          },
        ]
      : []),
    ...variantSetProblems(input.variants.map((v) => ({ ...v, agent: v.agent_id }))),
    ...missingAgentProblems(input.variants, agentIds),
  ];
  if (problems.length > 0) throw new InputRuleError(problems);
  return {
    name: input.name,
    description: input.description ?? null,
    endAt,
    maxSessions: input.max_sessions ?? null,
    variants: input.variants.map((v) => ({
      name: v.name,
      weight: v.weight,
      isControl: v.is_control ?? false,
      agentId: v.agent_id,
    })),
  };
}

export async function createExperiment(
  db: Db,
  organizationId: number,
  input: ExperimentInput & { target_id: number },
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  const target = await findExperimentTarget(db, organizationId, input.target_id);
  const write = await checkedWrite(
    db,
    organizationId,
    input,
    targetProblems(input.target_id, target),
  );
  return runStepsInTransaction(db, function* () {
    const now = nowIso();
    const id = yield* insertExperimentRow({
      organizationId,
      targetId: input.target_id,
      name: write.name,
      description: write.description,
      endAt: write.endAt,
      maxSessions: write.maxSessions,
      status: 'draft',
      createdAt: now,
      updatedAt: now,
      lastUpdatedBy: lastUpdatedByName(author),
    });
    yield* insertVariants(id, write.variants);
    const record = yield* requireExperiment(organizationId, id);
    yield* recordChange(organizationId, id, now, 'created', author, null, stateOf(record));
    return record;
  });
}

/** Replaces name, description, planned end and the whole variant set of a draft. */
export async function updateExperiment(
  db: Db,
  organizationId: number,
  id: number,
  input: ExperimentInput & { target_id?: number | undefined },
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  const found = await requireExperimentNow(db, organizationId, id);
  // The state rule comes first: no body makes a running experiment editable.
  assertCanUpdate(id, found.status);
  const write = await checkedWrite(
    db,
    organizationId,
    input,
    targetChangeProblems(found.targetId, input.target_id, ['body', 'target_id']),
  );
  return runStepsInTransaction(db, function* () {
    const now = nowIso();
    const current = yield* requireExperiment(organizationId, id, now);
    assertCanUpdate(id, current.status);
    yield* updateExperimentRow(id, {
      name: write.name,
      description: write.description,
      endAt: write.endAt,
      maxSessions: write.maxSessions,
      updatedAt: now,
      lastUpdatedBy: lastUpdatedByName(author),
    });
    yield* deleteVariants(id);
    yield* insertVariants(id, write.variants);
    const record = yield* requireExperiment(organizationId, id);
    yield* recordChange(
      organizationId,
      id,
      now,
      'updated',
      author,
      stateOf(current),
      stateOf(record),
    );
    return record;
  });
}

/**
 * Moves `current`, whose checks passed, to `status`, stamping when and by whom, with its history
 * entry.
 */
function* setState(
  organizationId: number,
  current: ExperimentRecord,
  status: ExperimentStatus,
  author: ChangeAuthor,
): Steps<ExperimentRecord> {
  const now = nowIso();
  const stamp =
    status === 'running'
      ? { startedAt: now }
      : { stoppedAt: now, endedReason: 'stopped' satisfies EndedReason };
  yield* updateExperimentRow(current.id, {
    status,
    ...stamp,
    updatedAt: now,
    lastUpdatedBy: lastUpdatedByName(author),
  });
  const record = yield* requireExperiment(organizationId, current.id);
  const action = status === 'running' ? 'started' : 'stopped';
  yield* recordChange(
    organizationId,
    current.id,
    now,
    action,
    author,
    stateOf(current),
    stateOf(record),
  );
  return record;
}

/** Starts a draft; the warnings name what may spoil its comparison without preventing it. */
export async function startExperiment(
  db: Db,
  organizationId: number,
  id: number,
  author: ChangeAuthor,
): Promise<{ record: ExperimentRecord; warnings: string[] }> {
  let record: ExperimentRecord;
  try {
    record = await runStepsInTransaction(db, function* () {
      const now = nowIso();
      const current = yield* requireExperiment(organizationId, id, now);
      assertStartable(current, yield* experimentTarget(organizationId, current.targetId), now);
      // An experiment whose end_at has come no longer holds the target, stored or not yet.
      yield* storeDueEnds(now, current.targetId);
      return yield* setState(organizationId, current, 'running', author);
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // The unique index on running experiments' target refused: name the one that runs.
    const running = await findRunningOnTargetOf(db, id);
    if (!running) throw error;
    throw anotherRunningConflict(running.targetId, running);
  }
  return { record, warnings: await experimentStartWarnings(db, organizationId, id) };
}

export async function stopExperiment(
  db: Db,
  organizationId: number,
  id: number,
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  return runStepsInTransaction(db, function* () {
    const current = yield* requireExperiment(organizationId, id, nowIso());
    assertCanStop(id, current.status);
    return yield* setState(organizationId, current, 'stopped', author);
  });
}

/** Deletes a draft or stopped experiment and its variants; its sessions and history stay. */
export async function deleteExperiment(
  db: Db,
  organizationId: number,
  id: number,
  author: ChangeAuthor,
): Promise<void> {
  await runStepsInTransaction(db, function* () {
    const current = yield* requireExperiment(organizationId, id, nowIso());
    assertCanDelete(id, current.status);
    yield* deleteExperimentRow(id);
    yield* recordChange(organizationId, id, nowIso(), 'deleted', author, stateOf(current), null);
  });
}
