// Experiments and their variants as storage holds them: one experiment read with its target and
// variants joined in (by every change and planned end), the list's pages, what a change looks up
// (its target, its agents, its variants' agents for the start's warnings), and the rows a change
// and a planned end write. The use-cases (use-cases/experiment-changes.ts) open the transaction
// and apply the rules around these; "one running experiment per target" is the database's unique
// index, so the life cycle holds under concurrent requests and across server processes. The
// queries are written once for both backends (portable-sql.ts).

import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../engine/client.js';
import type { ListedPage, ListQuery } from '../../vocabulary/list-query.js';
import type {
  EndedReason,
  ExperimentProperty,
  ExperimentStatus,
} from '../../vocabulary/experiments.js';
import type { ColumnMap } from '../engine/list-sql.js';
import { selectListPage, type ListTable } from '../engine/list-table.js';
import {
  execute,
  idEquals,
  idIn,
  insertValues,
  runListRead,
  runSteps,
  selectList,
  selectRows,
  setValues,
  type Steps,
} from '../engine/portable-sql.js';
import {
  agents,
  channels,
  channelTargets,
  experiments,
  experimentVariants,
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

const VARIANTS_WITH_AGENTS = sql`${experimentVariants}
  INNER JOIN ${agents} ON ${agents.id} = ${experimentVariants.agentId}`;

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
    })} FROM ${VARIANTS_WITH_AGENTS}
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

/** The organization's experiment `id` as stored, or null without one. */
export function* readExperiment(
  organizationId: number,
  id: number,
): Steps<ExperimentRecord | null> {
  const rows = yield* selectRows<ExperimentRow>(
    sql`${SELECT_EXPERIMENTS} WHERE ${experiments.organizationId} = ${organizationId} AND ${idEquals(experiments.id, id)}`,
  );
  const [record] = yield* withVariants(rows);
  return record ?? null;
}

const EXPERIMENT_COLUMNS: ColumnMap<ExperimentProperty> = {
  id: experiments.id,
  name: experiments.name,
  name_exact: experiments.name,
  description: experiments.description,
  status: experiments.status,
  target_id: experiments.targetId,
  // Ordering by agent uses the control variant's agent; searching matches any variant's agent.
  agent_id: experiments.controlAgentId,
  created_at: experiments.createdAt,
  updated_at: experiments.updatedAt,
  started_at: experiments.startedAt,
  stopped_at: experiments.stoppedAt,
};

/** The ids of the experiments with a variant of the agent, from the agent's variants by index. */
function usingAgent(agentId: number): SQL {
  return sql`SELECT ${experimentVariants.experimentId} FROM ${experimentVariants} WHERE ${idEquals(experimentVariants.agentId, agentId)}`;
}

export const experimentsList: ListTable<ExperimentProperty> = {
  from: EXPERIMENTS_WITH_TARGETS,
  // The conditions and orders read the experiments table only: its count and the choice of a
  // page need no join.
  countFrom: sql`${experiments}`,
  organizationColumn: experiments.organizationId,
  primaryKey: experiments.id,
  columns: EXPERIMENT_COLUMNS,
  fields: EXPERIMENT_FIELDS,
  windowColumn: experiments.createdAt,
  // Ordering by agent uses the control variant's agent; searching matches any variant's.
  keySearches: { agent_id: (f) => usingAgent(Number(f.value)) },
  prefixOrdered: { description: { column: experiments.description, nullable: true } },
};

/** One page of the organization's experiments as stored. */
export async function listExperiments(
  db: Db,
  organizationId: number,
  query: ListQuery<ExperimentProperty>,
): Promise<ListedPage<ExperimentRecord>> {
  return runListRead(db, function* () {
    const { rows, totalCount, next } = yield* selectListPage<ExperimentProperty, ExperimentRow>(
      experimentsList,
      organizationId,
      query,
      db,
    );
    return { records: yield* withVariants(rows), totalCount, next };
  });
}

/** What the experiment rules read of a channel target. */
export interface ExperimentTarget {
  id: number;
  isAgentTest: boolean;
}

/** The organization's channel target `targetId`, or null when it has none. */
export function* experimentTarget(
  organizationId: number,
  targetId: number,
): Steps<ExperimentTarget | null> {
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
): Promise<ExperimentTarget | null> {
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

/** The organization's experiments named `name`, oldest first (a name is not unique). */
export function experimentsNamed(
  organizationId: number,
  name: string,
): Steps<Array<{ id: number; status: ExperimentStatus; targetId: number }>> {
  return selectRows<{ id: number; status: ExperimentStatus; targetId: number }>(
    sql`SELECT ${selectList({
      id: experiments.id,
      status: experiments.status,
      targetId: experiments.targetId,
    })}
        FROM ${experiments}
        WHERE ${experiments.organizationId} = ${organizationId}
          AND ${experiments.name} = ${name}
        ORDER BY ${experiments.id}`,
  );
}

type ExperimentValues = Omit<typeof experiments.$inferInsert, 'id' | 'controlAgentId'>;

export interface VariantValues {
  name: string;
  weight: number;
  isControl: boolean;
  agentId: number;
}

/**
 * The agent of the variants' control, which the experiment's row keeps with them: what the list
 * orders `agent_id` by, read from an index.
 */
function controlAgentOf(variants: readonly VariantValues[]): number | null {
  return variants.find((v) => v.isControl)?.agentId ?? null;
}

/** Inserts the experiment's variants, in the order given. */
function* insertVariants(experimentId: number, variants: readonly VariantValues[]): Steps<void> {
  if (variants.length === 0) return;
  yield* execute(
    sql`INSERT INTO ${experimentVariants} ${insertValues(
      experimentVariants,
      variants.map((v, position) => ({ ...v, experimentId, position })),
    )}`,
  );
}

/** Inserts an experiment row with its variants; returns its id. */
export function* insertExperimentRow(
  values: ExperimentValues,
  variants: readonly VariantValues[],
): Steps<number> {
  const row = { ...values, controlAgentId: controlAgentOf(variants) };
  const [created] = yield* selectRows<{ id: number }>(
    sql`INSERT INTO ${experiments} ${insertValues(experiments, [row])} RETURNING id`,
  );
  yield* insertVariants(created!.id, variants);
  return created!.id;
}

export function updateExperimentRow(id: number, values: Partial<ExperimentValues>): Steps<void> {
  return execute(
    sql`UPDATE ${experiments} SET ${setValues(experiments, values)} WHERE ${experiments.id} = ${id}`,
  );
}

/** Deletes the experiment and, by cascade, its variants; its sessions and history stay. */
export function deleteExperimentRow(id: number): Steps<void> {
  return execute(sql`DELETE FROM ${experiments} WHERE ${experiments.id} = ${id}`);
}

/**
 * Replaces the experiment's variants with these, in the order given. The row is written only when
 * the control's agent changes: each write is a new row version in every index on PostgreSQL.
 */
export function* replaceVariants(
  experimentId: number,
  variants: readonly VariantValues[],
): Steps<void> {
  yield* execute(
    sql`DELETE FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${experimentId}`,
  );
  yield* insertVariants(experimentId, variants);
  const controlAgentId = controlAgentOf(variants);
  yield* execute(
    sql`UPDATE ${experiments} SET ${setValues(experiments, { controlAgentId })}
        WHERE ${experiments.id} = ${experimentId}
          AND ${experiments.controlAgentId} IS DISTINCT FROM ${controlAgentId}`,
  );
}

/** The experiment running on the target of experiment `id`, if one does. */
export async function findRunningOnTargetOf(
  db: Db,
  id: number,
): Promise<{ id: number; name: string; targetId: number } | null> {
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
  return running ?? null;
}

// Planned ends: when an end is due and what it records is the use-case's.

/**
 * Up to `limit` running experiments whose end_at is at or before `now`, by id; on the target
 * `targetId` alone when one is given.
 */
export function dueEnds(
  now: string,
  limit: number,
  targetId?: number,
): Steps<Array<{ id: number; organizationId: number; endAt: string }>> {
  const onTarget = targetId === undefined ? sql`TRUE` : sql`${experiments.targetId} = ${targetId}`;
  return selectRows<{ id: number; organizationId: number; endAt: string }>(
    sql`SELECT ${selectList({
      id: experiments.id,
      organizationId: experiments.organizationId,
      endAt: experiments.endAt,
    })} FROM ${experiments}
      WHERE ${experiments.status} = 'running' AND ${experiments.endAt} <= ${now} AND ${onTarget}
      ORDER BY ${experiments.id} LIMIT ${limit}`,
  );
}

/**
 * Stores experiment `id` as stopped at `stoppedAt` for `reason`. `last_updated_by` keeps the last
 * person's name: the system is no one.
 */
export function storeEnded(
  id: number,
  reason: Exclude<EndedReason, 'stopped'>,
  stoppedAt: string,
  updatedAt: string,
): Steps<void> {
  return execute(
    sql`UPDATE ${experiments} SET ${setValues(experiments, {
      status: 'stopped',
      stoppedAt,
      endedReason: reason,
      updatedAt,
    })} WHERE ${experiments.id} = ${id}`,
  );
}

// The start's warnings: what they read of the variants' agents.

export interface VariantAgent {
  variantName: string;
  agentId: number;
  agentName: string;
  pinnedPromptVersion: number | null;
  promptId: number | null;
}

/** Each variant's agent, in variant order. */
export async function variantAgents(db: Db, experimentId: number): Promise<VariantAgent[]> {
  return runSteps(db, () =>
    selectRows<VariantAgent>(
      sql`SELECT ${selectList({
        variantName: experimentVariants.name,
        agentId: agents.id,
        agentName: agents.name,
        pinnedPromptVersion: agents.pinnedPromptVersion,
        promptId: agents.promptId,
      })} FROM ${VARIANTS_WITH_AGENTS}
        WHERE ${idEquals(experimentVariants.experimentId, experimentId)}
        ORDER BY ${experimentVariants.position}`,
    ),
  );
}
