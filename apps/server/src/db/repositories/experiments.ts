// Experiments and their variants. Every state change reads and writes inside one write
// transaction, and "one running experiment per target" is the database's unique index, so the
// life cycle holds under concurrent requests and across server processes. The queries are written
// once for both backends (portable-sql.ts).

import { sql, type SQL } from 'drizzle-orm';
import {
  anotherRunningConflict,
  asOf,
  assertCanDelete,
  assertCanStop,
  assertCanUpdate,
  assertStartable,
  type ExperimentProperty,
  dueEnd,
  type EndedReason,
  type ExperimentStatus,
  type TargetFacts,
} from '../../domain/experiments.js';
import { RecordNotFoundError } from '../../domain/errors.js';
import {
  fieldChanges,
  OPERATOR_NAME,
  stateOf,
  SYSTEM,
  type ChangeAction,
  type ChangeAuthor,
  type ExperimentChangeProperty,
  type ExperimentState,
  type FieldChanges,
} from '../../domain/experiment-history.js';
import type { ListPosition, ListQuery } from '../../domain/list-query.js';
import { nowIso } from '../../domain/timestamps.js';
import type { Db } from '../engine/client.js';
import { isUniqueViolation } from '../engine/errors.js';
import { selectListPage, type ColumnMap, type ListTable } from '../engine/list-sql.js';
import {
  execute,
  idEquals,
  idIn,
  insertValues,
  jsonText,
  parsedJson,
  runListRead,
  runSteps,
  runStepsInTransaction,
  selectList,
  selectRows,
  setValues,
  type Steps,
} from '../engine/portable-sql.js';
import {
  agents,
  channels,
  channelTargets,
  experimentChanges,
  experiments,
  experimentSessionCounts,
  experimentVariants,
  sessions,
} from '../schema/sqlite.js';

export interface VariantRecord {
  id: number;
  name: string;
  weight: number;
  isControl: boolean;
  agentId: number;
  agentName: string;
}

export interface ExperimentRecord {
  id: number;
  name: string;
  description: string | null;
  targetId: number;
  status: ExperimentStatus;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  stoppedAt: string | null;
  lastUpdatedBy: string | null;
  endAt: string | null;
  maxSessions: number | null;
  endedReason: EndedReason | null;
  /** Sessions counted against max_sessions (kept only under a cap). */
  routedSessions: number;
  variants: VariantRecord[];
  target: {
    id: number;
    target: string;
    targetMode: string;
    channelId: number;
    channelName: string;
  };
}

export interface ExperimentWrite {
  name: string;
  description: string | null;
  endAt: string | null;
  maxSessions: number | null;
  variants: Array<{ name: string; weight: number; isControl: boolean; agentId: number }>;
}

const EXPERIMENT_COLUMNS: ColumnMap<ExperimentProperty> = {
  id: experiments.id,
  name: experiments.name,
  name_exact: experiments.name,
  description: experiments.description,
  status: experiments.status,
  target_id: experiments.targetId,
  // Ordering by agent uses the control variant's agent; searching matches any variant's agent.
  agent_id: sql`(SELECT ${experimentVariants.agentId} FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${experiments.id} AND ${experimentVariants.isControl} = TRUE)`,
  created_at: experiments.createdAt,
  updated_at: experiments.updatedAt,
  started_at: experiments.startedAt,
  stopped_at: experiments.stoppedAt,
};

function usesAgent(agentId: number): SQL {
  return sql`EXISTS (SELECT 1 FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${experiments.id} AND ${idEquals(experimentVariants.agentId, agentId)})`;
}

type ExperimentRow = Omit<ExperimentRecord, 'variants' | 'target'> & {
  channelTarget: string;
  targetMode: string;
  channelId: number;
  channelName: string;
};

const EXPERIMENT_FIELDS = {
  id: experiments.id,
  name: experiments.name,
  description: experiments.description,
  targetId: experiments.targetId,
  status: experiments.status,
  createdAt: experiments.createdAt,
  updatedAt: experiments.updatedAt,
  startedAt: experiments.startedAt,
  stoppedAt: experiments.stoppedAt,
  lastUpdatedBy: experiments.lastUpdatedBy,
  endAt: experiments.endAt,
  maxSessions: experiments.maxSessions,
  endedReason: experiments.endedReason,
  routedSessions: experiments.routedSessions,
  channelTarget: channelTargets.target,
  targetMode: channelTargets.targetMode,
  channelId: channels.id,
  channelName: channels.name,
};

const EXPERIMENTS_WITH_TARGETS = sql`${experiments}
  INNER JOIN ${channelTargets} ON ${channelTargets.id} = ${experiments.targetId}
  INNER JOIN ${channels} ON ${channels.id} = ${channelTargets.channelId}`;

const SELECT_EXPERIMENTS = sql`SELECT ${selectList(EXPERIMENT_FIELDS)} FROM ${EXPERIMENTS_WITH_TARGETS}`;

type VariantRow = Omit<VariantRecord, 'isControl'> & {
  experimentId: number;
  /** 0 or 1 on SQLite, a boolean on PostgreSQL. */
  isControl: unknown;
};

/** Adds the variants to experiment rows: one query for any number of experiments. */
function* withVariants(rows: ExperimentRow[]): Steps<ExperimentRecord[]> {
  if (rows.length === 0) return [];
  const variants = yield* selectRows<VariantRow>(
    sql`SELECT ${selectList({
      id: experimentVariants.id,
      experimentId: experimentVariants.experimentId,
      name: experimentVariants.name,
      weight: experimentVariants.weight,
      isControl: experimentVariants.isControl,
      agentId: experimentVariants.agentId,
      agentName: agents.name,
    })} FROM ${experimentVariants}
      INNER JOIN ${agents} ON ${agents.id} = ${experimentVariants.agentId}
      WHERE ${idIn(
        experimentVariants.experimentId,
        rows.map((r) => r.id),
      )}
      ORDER BY ${experimentVariants.experimentId}, ${experimentVariants.position}`,
  );
  const byExperiment = new Map<number, VariantRecord[]>();
  for (const { experimentId, isControl, ...variant } of variants) {
    const list = byExperiment.get(experimentId) ?? [];
    list.push({ ...variant, isControl: Boolean(isControl) });
    byExperiment.set(experimentId, list);
  }
  return rows.map(({ channelTarget, targetMode, channelId, channelName, ...row }) => ({
    ...row,
    variants: byExperiment.get(row.id) ?? [],
    target: { id: row.targetId, target: channelTarget, targetMode, channelId, channelName },
  }));
}

function* readExperiment(organizationId: number, id: number): Steps<ExperimentRecord | null> {
  const rows = yield* selectRows<ExperimentRow>(
    sql`${SELECT_EXPERIMENTS} WHERE ${experiments.organizationId} = ${organizationId} AND ${idEquals(experiments.id, id)}`,
  );
  const [record] = yield* withVariants(rows);
  return record ?? null;
}

/** What the history records of the organization's experiment `id` now, or null without one. */
export function* experimentState(
  organizationId: number,
  id: number,
): Steps<ExperimentState | null> {
  const record = yield* readExperiment(organizationId, id);
  return record && stateOf(record);
}

function* requireExperiment(organizationId: number, id: number): Steps<ExperimentRecord> {
  const record = yield* readExperiment(organizationId, id);
  if (!record) {
    throw new RecordNotFoundError(`There is no experiment ${id} in this organization.`);
  }
  return record;
}

export async function getExperiment(
  db: Db,
  organizationId: number,
  id: number,
): Promise<ExperimentRecord | null> {
  const record = await runSteps(db, () => readExperiment(organizationId, id));
  return record && asOf(record, nowIso());
}

const EXPERIMENT_LIST_TABLE: ListTable<ExperimentProperty> = {
  from: EXPERIMENTS_WITH_TARGETS,
  // The conditions read the experiments table only: its count needs no join.
  countFrom: sql`${experiments}`,
  organizationColumn: experiments.organizationId,
  primaryKey: experiments.id,
  columns: EXPERIMENT_COLUMNS,
  fields: EXPERIMENT_FIELDS,
  windowColumn: experiments.createdAt,
  // Ordering by agent uses the control variant's agent; searching matches any variant's.
  conditions: { agent_id: (f) => usesAgent(Number(f.value)) },
};

export async function listExperiments(
  db: Db,
  organizationId: number,
  query: ListQuery<ExperimentProperty>,
): Promise<{ records: ExperimentRecord[]; totalCount: number; next: ListPosition | null }> {
  return runListRead(db, function* () {
    const { rows, totalCount, next } = yield* selectListPage<ExperimentProperty, ExperimentRow>(
      EXPERIMENT_LIST_TABLE,
      organizationId,
      query,
      db.spelling,
    );
    const now = nowIso();
    const records = (yield* withVariants(rows)).map((record) => asOf(record, now));
    return { records, totalCount, next };
  });
}

/** The target as the experiment rules see it, or null when the organization has no such target. */
export function* experimentTarget(
  organizationId: number,
  targetId: number,
): Steps<TargetFacts | null> {
  const [target] = yield* selectRows<{ id: number; isAgentTest: unknown }>(
    sql`SELECT ${selectList({ id: channelTargets.id, isAgentTest: channelTargets.isAgentTest })}
      FROM ${channelTargets}
      WHERE ${channelTargets.organizationId} = ${organizationId} AND ${idEquals(channelTargets.id, targetId)}`,
  );
  // 0 or 1 on SQLite, a boolean on PostgreSQL.
  return target ? { id: target.id, isAgentTest: Boolean(target.isAgentTest) } : null;
}

export async function findExperimentTarget(
  db: Db,
  organizationId: number,
  targetId: number,
): Promise<TargetFacts | null> {
  return runSteps(db, () => experimentTarget(organizationId, targetId));
}

/** Which of these agent ids exist in the organization. */
export async function findAgentIds(
  db: Db,
  organizationId: number,
  agentIds: readonly number[],
): Promise<Set<number>> {
  if (agentIds.length === 0) return new Set();
  const rows = await runSteps(db, () =>
    selectRows<{ id: number }>(
      sql`SELECT ${agents.id} AS "id" FROM ${agents}
        WHERE ${agents.organizationId} = ${organizationId} AND ${idIn(agents.id, agentIds)}`,
    ),
  );
  return new Set(rows.map((r) => r.id));
}

function insertVariants(experimentId: number, write: ExperimentWrite): Steps<void> {
  return execute(
    sql`INSERT INTO ${experimentVariants} ${insertValues(
      experimentVariants,
      write.variants.map((v, position) => ({ ...v, experimentId, position })),
    )}`,
  );
}

export async function createExperiment(
  db: Db,
  organizationId: number,
  targetId: number,
  write: ExperimentWrite,
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  return runStepsInTransaction(db, function* () {
    const now = nowIso();
    const [created] = yield* selectRows<{ id: number }>(
      sql`INSERT INTO ${experiments} ${insertValues(experiments, [
        {
          organizationId,
          targetId,
          name: write.name,
          description: write.description,
          endAt: write.endAt,
          maxSessions: write.maxSessions,
          status: 'draft',
          createdAt: now,
          updatedAt: now,
          lastUpdatedBy: authorName(author),
        },
      ])} RETURNING id`,
    );
    yield* insertVariants(created!.id, write);
    const record = yield* requireExperiment(organizationId, created!.id);
    yield* recordChange(organizationId, record.id, now, 'created', author, null, stateOf(record));
    return record;
  });
}

/** Replaces name, description and the whole variant set of a draft. */
export async function replaceDraftExperiment(
  db: Db,
  organizationId: number,
  id: number,
  write: ExperimentWrite,
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  return runStepsInTransaction(db, function* () {
    const now = nowIso();
    const current = yield* requireCurrent(organizationId, id, now);
    assertCanUpdate(id, current.status);
    yield* execute(
      sql`UPDATE ${experiments} SET ${setValues(experiments, {
        name: write.name,
        description: write.description,
        endAt: write.endAt,
        maxSessions: write.maxSessions,
        updatedAt: now,
        lastUpdatedBy: authorName(author),
      })} WHERE ${experiments.id} = ${id}`,
    );
    yield* execute(
      sql`DELETE FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${id}`,
    );
    yield* insertVariants(id, write);
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
  yield* execute(
    sql`UPDATE ${experiments} SET ${setValues(experiments, {
      status,
      ...stamp,
      updatedAt: now,
      lastUpdatedBy: authorName(author),
    })} WHERE ${experiments.id} = ${current.id}`,
  );
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

export async function startExperiment(
  db: Db,
  organizationId: number,
  id: number,
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  try {
    return await runStepsInTransaction(db, function* () {
      const now = nowIso();
      const current = yield* requireCurrent(organizationId, id, now);
      assertStartable(current, yield* experimentTarget(organizationId, current.targetId), now);
      // An experiment whose end_at has come no longer holds the target, stored or not yet.
      yield* storeDueEnds(sql`${experiments.targetId} = ${current.targetId}`, now);
      return yield* setState(organizationId, current, 'running', author);
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // The unique index on running experiments' target refused: name the one that runs.
    const [running] = await runSteps(db, () =>
      selectRows<{ id: number; name: string; targetId: number }>(
        sql`SELECT ${selectList({
          id: experiments.id,
          name: experiments.name,
          targetId: experiments.targetId,
        })} FROM ${experiments}
          WHERE ${experiments.status} = 'running'
            AND ${experiments.targetId} = (SELECT ${experiments.targetId} FROM ${experiments} WHERE ${experiments.id} = ${id})`,
      ),
    );
    if (!running) throw error;
    throw anotherRunningConflict(running.targetId, running);
  }
}

export async function stopExperiment(
  db: Db,
  organizationId: number,
  id: number,
  author: ChangeAuthor,
): Promise<ExperimentRecord> {
  return runStepsInTransaction(db, function* () {
    const current = yield* requireCurrent(organizationId, id, nowIso());
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
    const current = yield* requireCurrent(organizationId, id, nowIso());
    assertCanDelete(id, current.status);
    yield* execute(sql`DELETE FROM ${experiments} WHERE ${experiments.id} = ${id}`);
    yield* recordChange(organizationId, id, nowIso(), 'deleted', author, stateOf(current), null);
  });
}

/** The name an experiment's `last_updated_by` shows for the author of a change. */
function authorName(author: ChangeAuthor): string {
  return author.actor.type === 'api_key' ? author.actor.keyName : OPERATOR_NAME;
}

/**
 * Stores the planned end of the running experiment `id`: stopped at `stoppedAt` for `reason`,
 * with the system's history entry, inside the caller's transaction (routing's, a start's, the
 * sweep's). `last_updated_by` keeps the last person's name: the system is no one.
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
  yield* execute(
    sql`UPDATE ${experiments} SET ${setValues(experiments, {
      status: 'stopped',
      stoppedAt,
      endedReason: reason,
      updatedAt: now,
    })} WHERE ${experiments.id} = ${id}`,
  );
  const after = yield* requireExperiment(organizationId, id);
  yield* recordChange(organizationId, id, now, 'ended', SYSTEM, stateOf(current), stateOf(after));
}

/** Stores the end of every running experiment (matching `where`) whose end_at has come. */
function* storeDueEnds(where: SQL, now: string): Steps<number> {
  const due = yield* selectRows<{ id: number; organizationId: number; endAt: string }>(
    sql`SELECT ${selectList({
      id: experiments.id,
      organizationId: experiments.organizationId,
      endAt: experiments.endAt,
    })} FROM ${experiments}
      WHERE ${experiments.status} = 'running' AND ${experiments.endAt} <= ${now} AND ${where}
      ORDER BY ${experiments.id} LIMIT ${SWEEP_BATCH}`,
  );
  for (const { id, organizationId, endAt } of due) {
    yield* storePlannedEnd(organizationId, id, 'end_at', endAt);
  }
  return due.length;
}

/** Experiments one sweep transaction ends at most, so it holds the write lock only briefly. */
const SWEEP_BATCH = 100;

/**
 * Stores the end of every running experiment whose end_at has come, in transactions of a few:
 * what reads already show (asOf), made true in storage for lists and for experiments nobody
 * routes to. Returns how many it ended.
 */
export async function sweepPlannedEnds(db: Db): Promise<number> {
  let ended = 0;
  for (;;) {
    const batch = await runStepsInTransaction(db, () => storeDueEnds(sql`TRUE`, nowIso()));
    ended += batch;
    if (batch < SWEEP_BATCH) return ended;
  }
}

/**
 * The experiment as a write finds it: one whose end_at has come is first stored as ended, so
 * the write sees (and the history shows) what every read already showed.
 */
function* requireCurrent(organizationId: number, id: number, now: string): Steps<ExperimentRecord> {
  const record = yield* requireExperiment(organizationId, id);
  if (record.status !== 'running' || dueEnd(record, now) !== 'end_at') return record;
  yield* storePlannedEnd(organizationId, id, 'end_at', record.endAt!);
  return yield* requireExperiment(organizationId, id);
}

/**
 * Writes the history entry of a change, inside the change's own transaction: the change and its
 * entry commit together or not at all.
 */
export function* recordChange(
  organizationId: number,
  experimentId: number,
  occurredAt: string,
  action: ChangeAction,
  author: ChangeAuthor,
  before: ExperimentState | null,
  after: ExperimentState | null,
): Steps<void> {
  const { actor } = author;
  yield* execute(
    sql`INSERT INTO ${experimentChanges} ${insertValues(experimentChanges, [
      {
        organizationId,
        experimentId,
        occurredAt,
        action,
        actorType: actor.type,
        actorKeyId: actor.type === 'api_key' ? actor.keyId : null,
        actorKeyName: actor.type === 'api_key' ? actor.keyName : null,
        requestId: author.requestId,
        changes: jsonText(fieldChanges(before, after)),
      },
    ])}`,
  );
}

export interface ExperimentChangeRecord {
  id: number;
  experimentId: number;
  occurredAt: string;
  action: ChangeAction;
  actor: ChangeAuthor['actor'];
  requestId: string | null;
  changes: FieldChanges;
}

interface ExperimentChangeRow {
  id: number;
  experimentId: number;
  occurredAt: string;
  action: ChangeAction;
  actorType: ChangeAuthor['actor']['type'];
  actorKeyId: string | null;
  actorKeyName: string | null;
  requestId: string | null;
  /** Text on SQLite, parsed on PostgreSQL. */
  changes: FieldChanges | string;
}

/**
 * One page of an experiment's history, newest first. The experiment may be deleted; an id that
 * never named an experiment of the organization (no record, no history) is not found.
 */
export async function experimentHistoryPage(
  db: Db,
  organizationId: number,
  experimentId: number,
  query: ListQuery<ExperimentChangeProperty>,
): Promise<{ records: ExperimentChangeRecord[]; totalCount: number; next: ListPosition | null }> {
  return runListRead(db, function* () {
    const [known] = yield* selectRows<{ id: number }>(
      sql`SELECT ${experiments.id} AS "id" FROM ${experiments}
          WHERE ${experiments.organizationId} = ${organizationId} AND ${idEquals(experiments.id, experimentId)}
        UNION ALL
        SELECT ${experimentChanges.experimentId} AS "id" FROM ${experimentChanges}
          WHERE ${experimentChanges.organizationId} = ${organizationId}
            AND ${idEquals(experimentChanges.experimentId, experimentId)}
        LIMIT 1`,
    );
    if (!known) {
      throw new RecordNotFoundError(`There is no experiment ${experimentId} in this organization.`);
    }
    const { rows, totalCount, next } = yield* selectListPage<
      ExperimentChangeProperty,
      ExperimentChangeRow
    >(
      {
        from: sql`${experimentChanges}`,
        organizationColumn: experimentChanges.organizationId,
        within: idEquals(experimentChanges.experimentId, experimentId),
        primaryKey: experimentChanges.id,
        columns: { id: experimentChanges.id },
        fields: {
          id: experimentChanges.id,
          experimentId: experimentChanges.experimentId,
          occurredAt: experimentChanges.occurredAt,
          action: experimentChanges.action,
          actorType: experimentChanges.actorType,
          actorKeyId: experimentChanges.actorKeyId,
          actorKeyName: experimentChanges.actorKeyName,
          requestId: experimentChanges.requestId,
          changes: experimentChanges.changes,
        },
      },
      organizationId,
      query,
      db.spelling,
    );
    const records = rows.map(
      ({ actorType, actorKeyId, actorKeyName, changes, ...row }): ExperimentChangeRecord => ({
        ...row,
        actor:
          actorType === 'api_key'
            ? { type: 'api_key', keyId: actorKeyId!, keyName: actorKeyName! }
            : { type: actorType },
        changes: parsedJson(changes),
      }),
    );
    return { records, totalCount, next };
  });
}

/**
 * Routed sessions per variant id (variants without sessions are absent), added up from the
 * experiment's quarter-hour counts (schema: experimentSessionCounts).
 */
export async function sessionCountsByVariant(
  db: Db,
  experimentId: number,
): Promise<Map<number, number>> {
  const rows = await runSteps(db, () =>
    selectRows<{ variantId: number; n: number }>(
      sql`SELECT ${experimentSessionCounts.variantId} AS "variantId",
          sum(${experimentSessionCounts.sessionCount}) AS "n"
        FROM ${experimentSessionCounts}
        WHERE ${idEquals(experimentSessionCounts.experimentId, experimentId)}
        GROUP BY ${experimentSessionCounts.variantId}`,
    ),
  );
  return new Map(rows.map((r) => [r.variantId, r.n]));
}

export interface VariantAgent {
  variantName: string;
  agentId: number;
  agentName: string;
  pinnedPromptVersion: number | null;
  promptId: number | null;
}

/** What start warnings need about each variant's agent, in variant order. */
export async function variantAgents(db: Db, experimentId: number): Promise<VariantAgent[]> {
  return runSteps(db, () =>
    selectRows<VariantAgent>(
      sql`SELECT ${selectList({
        variantName: experimentVariants.name,
        agentId: agents.id,
        agentName: agents.name,
        pinnedPromptVersion: agents.pinnedPromptVersion,
        promptId: agents.promptId,
      })} FROM ${experimentVariants}
        INNER JOIN ${agents} ON ${agents.id} = ${experimentVariants.agentId}
        WHERE ${idEquals(experimentVariants.experimentId, experimentId)}
        ORDER BY ${experimentVariants.position}`,
    ),
  );
}

export interface TimelineCount {
  bucket: number;
  variantId: number;
  n: number;
}

const QUARTER_HOUR_MS = 15 * 60_000;

/** Bucket `bucket`'s time range `[from, to)`, as ISO text. */
type BucketRange = readonly [bucket: number, from: string, to: string];

/**
 * Splits each bucket `[bounds[i], bounds[i + 1])` into its whole quarter hours, counted in
 * experiment_session_counts, and what is left at either end, counted from the sessions
 * themselves. Buckets of hours and days start on quarter hours in every zone today, so the ends
 * are empty unless the zone's offset then was not a multiple of 15 minutes.
 */
function splitBuckets(bounds: readonly string[]) {
  const quarters: BucketRange[] = [];
  const ends: BucketRange[] = [];
  const iso = (instant: number) => new Date(instant).toISOString();
  for (let bucket = 0; bucket + 1 < bounds.length; bucket += 1) {
    const [from, to] = [bounds[bucket]!, bounds[bucket + 1]!];
    const firstQuarter = Math.ceil(Date.parse(from) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
    const endOfQuarters = Math.floor(Date.parse(to) / QUARTER_HOUR_MS) * QUARTER_HOUR_MS;
    if (firstQuarter >= endOfQuarters) {
      ends.push([bucket, from, to]);
      continue;
    }
    quarters.push([bucket, iso(firstQuarter), iso(endOfQuarters)]);
    if (from < iso(firstQuarter)) ends.push([bucket, from, iso(firstQuarter)]);
    if (iso(endOfQuarters) < to) ends.push([bucket, iso(endOfQuarters), to]);
  }
  return { quarters, ends };
}

/** Sessions per bucket and variant of `table`'s rows whose `time` is in the bucket's range. */
function countsInRanges(
  ranges: readonly BucketRange[],
  experimentId: number,
  { table, time, variantId, sessionCount }: typeof COUNTED_IN_QUARTERS | typeof COUNTED_ONE_BY_ONE,
): Steps<Array<{ bucket: number; variantId: number | null; n: number }>> {
  const rows = ranges.map(
    ([bucket, from, to]) =>
      sql`(CAST(${bucket} AS INTEGER), CAST(${from} AS TEXT), CAST(${to} AS TEXT))`,
  );
  return selectRows(
    sql`WITH ranges (bucket, lo, hi) AS (VALUES ${sql.join(rows, sql`, `)})
      SELECT ranges.bucket AS "bucket", ${variantId} AS "variantId", ${sessionCount} AS "n"
      FROM ranges INNER JOIN ${table}
        ON ${idEquals(table.experimentId, experimentId)}
        AND ${time} >= ranges.lo AND ${time} < ranges.hi
      GROUP BY ranges.bucket, ${variantId}`,
  );
}

const COUNTED_IN_QUARTERS = {
  table: experimentSessionCounts,
  time: experimentSessionCounts.slotStart,
  variantId: experimentSessionCounts.variantId,
  sessionCount: sql`sum(${experimentSessionCounts.sessionCount})`,
};

const COUNTED_ONE_BY_ONE = {
  table: sessions,
  time: sessions.createdAt,
  variantId: sessions.variantId,
  sessionCount: sql`count(*)`,
};

/**
 * Sessions per bucket and variant: every bucket's whole quarter hours in one statement, a VALUES
 * list of ranges joined to the experiment's quarter-hour counts (a range of their primary key
 * each), and any part-quarter ends in another, joined to the sessions' (experiment_id,
 * created_at) index. Buckets and variants without sessions are absent.
 */
export async function sessionCountsByBucket(
  db: Db,
  experimentId: number,
  bounds: readonly string[],
): Promise<TimelineCount[]> {
  const { quarters, ends } = splitBuckets(bounds);
  const counted = await runSteps(db, function* () {
    const inQuarters =
      quarters.length === 0
        ? []
        : yield* countsInRanges(quarters, experimentId, COUNTED_IN_QUARTERS);
    const inEnds =
      ends.length === 0 ? [] : yield* countsInRanges(ends, experimentId, COUNTED_ONE_BY_ONE);
    return [...inQuarters, ...inEnds];
  });
  // A bucket with ends has more than one row per variant.
  const counts = new Map<string, TimelineCount>();
  for (const { bucket, variantId, n } of counted) {
    if (variantId === null || n === 0) continue;
    const key = `${bucket} ${variantId}`;
    const seen = counts.get(key);
    if (seen) seen.n += n;
    else counts.set(key, { bucket, variantId, n });
  }
  return [...counts.values()];
}
