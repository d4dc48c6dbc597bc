// Every change to an experiment, each in one place: the API's create, update, start, stop and
// delete, and the planned ends the system stores (docs/decisions.md section 9). Each is one write
// transaction that loads the experiment as it stands, applies the rule (domain/experiments.ts),
// writes, and appends the history entry, so a change and its entry commit together or not at all
// (docs/architecture.md, "One home per rule").

import type { Db } from '../db/engine/client.js';
import { isUniqueViolation } from '../db/engine/errors.js';
import { runStepsInTransaction, type Steps } from '../db/engine/portable-sql.js';
import { appendChange } from '../db/repositories/experiment-history.js';
import {
  deleteExperimentRow,
  dueEnds,
  experimentTarget,
  findAgentIds,
  findExperimentTarget,
  findRunningOnTargetOf,
  insertExperimentRow,
  replaceVariants,
  readExperiment,
  storeEnded,
  updateExperimentRow,
  variantAgents,
  type ExperimentRecord,
  type VariantValues,
} from '../db/repositories/experiments.js';
import { findPrompts } from '../db/repositories/prompts.js';
import { InputRuleError, RecordNotFoundError, type InputProblem } from '../domain/errors.js';
import {
  anotherRunningConflict,
  assertCanDelete,
  assertCanStop,
  assertCanUpdate,
  assertStartable,
  dueEnd,
  fieldChanges,
  lastUpdatedByName,
  missingAgentProblems,
  startWarnings,
  stateOf,
  SYSTEM,
  targetChangeProblems,
  targetProblems,
  variantSetProblems,
  type ChangeAuthor,
  type ExperimentState,
  type VariantInput,
} from '../domain/experiments.js';
import { promptErrorIssueIds } from '../domain/prompt-validation.js';
import { normalizeDateTime, nowIso } from '../domain/timestamps.js';
import type { ChangeAction, EndedReason, ExperimentStatus } from '../vocabulary/experiments.js';
import { requireExperimentNow } from './experiment-reads.js';

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
    const id = yield* insertExperimentRow(
      {
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
      },
      write.variants,
    );
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
    yield* replaceVariants(id, write.variants);
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

/**
 * The start's warnings, from facts of two areas: the variants' agents and their prompts'
 * validation issues.
 */
async function experimentStartWarnings(
  db: Db,
  organizationId: number,
  experimentId: number,
): Promise<string[]> {
  const variants = await variantAgents(db, experimentId);
  const { rows, tools } = await findPrompts(
    db,
    organizationId,
    variants.flatMap((v) => (v.promptId === null ? [] : [v.promptId])),
  );
  const errorIssues = promptErrorIssueIds(rows, tools);
  return startWarnings(
    variants.map((v) => ({
      ...v,
      promptErrorIssueIds: v.promptId === null ? [] : (errorIssues.get(v.promptId) ?? []),
    })),
  );
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

// Planned ends: a running experiment whose end_at came, or that routed max_sessions sessions, is
// stored as stopped with the system's history entry, inside the transaction of whoever found it
// due: routing, a change, or the sweep.

/**
 * The organization's experiment `id` as stored; not found without one. With `now`, as a change
 * finds it: one whose end_at has come is first stored as ended, so the change sees (and the
 * history shows) what every read already showed.
 */
export function* requireExperiment(
  organizationId: number,
  id: number,
  now?: string,
): Steps<ExperimentRecord> {
  const record = yield* readExperiment(organizationId, id);
  if (!record) {
    throw new RecordNotFoundError(`There is no experiment ${id} in this organization.`);
  }
  if (now === undefined || record.status !== 'running' || dueEnd(record, now) !== 'end_at') {
    return record;
  }
  yield* storePlannedEnd(organizationId, id, 'end_at', record.endAt!);
  return yield* requireExperiment(organizationId, id);
}

/**
 * Stores the planned end of the running experiment `id`: stopped at `stoppedAt` for `reason`,
 * with the system's history entry, inside the caller's transaction.
 */
export function* storePlannedEnd(
  organizationId: number,
  id: number,
  reason: Exclude<EndedReason, 'stopped'>,
  stoppedAt: string,
): Steps<void> {
  const current = yield* requireExperiment(organizationId, id);
  if (current.status !== 'running') return;
  const now = nowIso();
  yield* storeEnded(id, reason, stoppedAt, now);
  const after = yield* requireExperiment(organizationId, id);
  yield* recordChange(organizationId, id, now, 'ended', SYSTEM, stateOf(current), stateOf(after));
}

/** Experiments one sweep transaction ends at most, so it holds the write lock only briefly. */
const SWEEP_BATCH = 100;

/**
 * Stores the end of every running experiment (on target `targetId` alone, when given) whose
 * end_at has come, up to a sweep batch; returns how many it ended.
 */
export function* storeDueEnds(now: string, targetId?: number): Steps<number> {
  const due = yield* dueEnds(now, SWEEP_BATCH, targetId);
  for (const { id, organizationId, endAt } of due) {
    yield* storePlannedEnd(organizationId, id, 'end_at', endAt);
  }
  return due.length;
}

/**
 * Stores the end of every running experiment whose end_at has come, in transactions of a few:
 * what reads already show (asOf), made true in storage for lists and for experiments nobody
 * routes to. Returns how many it ended.
 */
export async function sweepPlannedEnds(db: Db): Promise<number> {
  let ended = 0;
  for (;;) {
    const batch = await runStepsInTransaction(db, () => storeDueEnds(nowIso()));
    ended += batch;
    if (batch < SWEEP_BATCH) return ended;
  }
}

/** Writes the history entry of a change from the experiment's state before and after it. */
export function recordChange(
  organizationId: number,
  experimentId: number,
  occurredAt: string,
  action: ChangeAction,
  author: ChangeAuthor,
  before: ExperimentState | null,
  after: ExperimentState | null,
): Steps<void> {
  return appendChange(organizationId, {
    experimentId,
    occurredAt,
    action,
    actor: author.actor,
    requestId: author.requestId,
    changes: fieldChanges(before, after),
  });
}
