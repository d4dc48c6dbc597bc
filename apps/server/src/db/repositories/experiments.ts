// Experiments and their variants. Every state change reads and writes inside one write
// transaction, and "one running experiment per target" is the database's unique index, so the
// life cycle holds under concurrent requests and across server processes.

import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import {
  anotherRunningConflict,
  assertCanDelete,
  assertCanStart,
  assertCanStop,
  assertCanUpdate,
  type ExperimentProperty,
  type ExperimentStatus,
} from '../../domain/experiments.js';
import { RecordNotFoundError } from '../../domain/errors.js';
import type { ListQuery } from '../../domain/list-query.js';
import { nowIso } from '../../domain/timestamps.js';
import { withTransaction, type Db, type SqliteTransaction } from '../client.js';
import { isUniqueViolation } from '../errors.js';
import { listConditions, listOrder, type ColumnMap } from '../list-sql.js';
import {
  agents,
  channels,
  channelTargets,
  experiments,
  experimentVariants,
  sessions,
} from '../schema.js';

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
  variants: Array<{ name: string; weight: number; isControl: boolean; agentId: number }>;
}

type Reader = Db['orm'] | SqliteTransaction;

const EXPERIMENT_COLUMNS: ColumnMap<ExperimentProperty> = {
  id: experiments.id,
  name: experiments.name,
  name_exact: experiments.name,
  description: experiments.description,
  status: experiments.status,
  target_id: experiments.targetId,
  // Ordering by agent uses the control variant's agent; searching matches any variant's agent.
  agent_id: sql`(SELECT ${experimentVariants.agentId} FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${experiments.id} AND ${experimentVariants.isControl} = 1)`,
  created_at: experiments.createdAt,
  updated_at: experiments.updatedAt,
  started_at: experiments.startedAt,
  stopped_at: experiments.stoppedAt,
};

function usesAgent(agentId: number): SQL {
  return sql`EXISTS (SELECT 1 FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${experiments.id} AND ${experimentVariants.agentId} = ${agentId})`;
}

const experimentRowColumns = {
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
  target: {
    id: channelTargets.id,
    target: channelTargets.target,
    targetMode: channelTargets.targetMode,
    channelId: channels.id,
    channelName: channels.name,
  },
};

/** Adds the variants to experiment rows: one query for any number of experiments. */
function withVariants(
  reader: Reader,
  rows: Array<Omit<ExperimentRecord, 'variants'>>,
): ExperimentRecord[] {
  if (rows.length === 0) return [];
  const variants = reader
    .select({
      id: experimentVariants.id,
      experimentId: experimentVariants.experimentId,
      name: experimentVariants.name,
      weight: experimentVariants.weight,
      isControl: experimentVariants.isControl,
      agentId: experimentVariants.agentId,
      agentName: agents.name,
    })
    .from(experimentVariants)
    .innerJoin(agents, eq(agents.id, experimentVariants.agentId))
    .where(
      inArray(
        experimentVariants.experimentId,
        rows.map((r) => r.id),
      ),
    )
    .orderBy(asc(experimentVariants.experimentId), asc(experimentVariants.position))
    .all();
  const byExperiment = new Map<number, VariantRecord[]>();
  for (const { experimentId, ...variant } of variants) {
    const list = byExperiment.get(experimentId) ?? [];
    list.push(variant);
    byExperiment.set(experimentId, list);
  }
  return rows.map((row) => ({ ...row, variants: byExperiment.get(row.id) ?? [] }));
}

function selectExperiments(reader: Reader) {
  return reader
    .select(experimentRowColumns)
    .from(experiments)
    .innerJoin(channelTargets, eq(channelTargets.id, experiments.targetId))
    .innerJoin(channels, eq(channels.id, channelTargets.channelId));
}

function readExperiment(
  reader: Reader,
  organizationId: number,
  id: number,
): ExperimentRecord | null {
  const row = selectExperiments(reader)
    .where(and(eq(experiments.organizationId, organizationId), eq(experiments.id, id)))
    .get();
  return row ? withVariants(reader, [row])[0]! : null;
}

function requireExperiment(reader: Reader, organizationId: number, id: number): ExperimentRecord {
  const record = readExperiment(reader, organizationId, id);
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
  return readExperiment(db.orm, organizationId, id);
}

export async function listExperiments(
  db: Db,
  organizationId: number,
  query: ListQuery<ExperimentProperty>,
): Promise<{ records: ExperimentRecord[]; totalCount: number }> {
  const agentFilters = query.filters.filter((f) => f.property === 'agent_id');
  const otherFilters = {
    ...query,
    filters: query.filters.filter((f) => f.property !== 'agent_id'),
  };
  const where = and(
    eq(experiments.organizationId, organizationId),
    ...listConditions(otherFilters, {
      columns: EXPERIMENT_COLUMNS,
      windowColumn: experiments.createdAt,
    }),
    ...agentFilters.map((f) => usesAgent(Number(f.value))),
  );
  const rows =
    query.limit === 0
      ? []
      : selectExperiments(db.orm)
          .where(where)
          .orderBy(...listOrder(query, EXPERIMENT_COLUMNS, experiments.id))
          .limit(query.limit)
          .offset(query.offset)
          .all();
  const [total] = db.orm.select({ n: count() }).from(experiments).where(where).all();
  return { records: withVariants(db.orm, rows), totalCount: total?.n ?? 0 };
}

/** The target as the experiment rules see it, or null when the organization has no such target. */
export async function findExperimentTarget(
  db: Db,
  organizationId: number,
  targetId: number,
): Promise<{ id: number; isAgentTest: boolean } | null> {
  return (
    db.orm
      .select({ id: channelTargets.id, isAgentTest: channelTargets.isAgentTest })
      .from(channelTargets)
      .where(
        and(eq(channelTargets.organizationId, organizationId), eq(channelTargets.id, targetId)),
      )
      .get() ?? null
  );
}

/** Which of these agent ids exist in the organization. */
export async function findAgentIds(
  db: Db,
  organizationId: number,
  agentIds: readonly number[],
): Promise<Set<number>> {
  if (agentIds.length === 0) return new Set();
  const rows = db.orm
    .select({ id: agents.id })
    .from(agents)
    .where(and(eq(agents.organizationId, organizationId), inArray(agents.id, [...agentIds])))
    .all();
  return new Set(rows.map((r) => r.id));
}

function insertVariants(tx: SqliteTransaction, experimentId: number, write: ExperimentWrite): void {
  tx.insert(experimentVariants)
    .values(write.variants.map((v, position) => ({ ...v, experimentId, position })))
    .run();
}

export async function createExperiment(
  db: Db,
  organizationId: number,
  targetId: number,
  write: ExperimentWrite,
  writtenBy: string,
): Promise<ExperimentRecord> {
  return withTransaction(db, (tx) => {
    const now = nowIso();
    const { id } = tx
      .insert(experiments)
      .values({
        organizationId,
        targetId,
        name: write.name,
        description: write.description,
        status: 'draft',
        createdAt: now,
        updatedAt: now,
        lastUpdatedBy: writtenBy,
      })
      .returning({ id: experiments.id })
      .get();
    insertVariants(tx, id, write);
    return requireExperiment(tx, organizationId, id);
  });
}

/** Replaces name, description and the whole variant set of a draft. */
export async function replaceDraftExperiment(
  db: Db,
  organizationId: number,
  id: number,
  write: ExperimentWrite,
  writtenBy: string,
): Promise<ExperimentRecord> {
  return withTransaction(db, (tx) => {
    const current = requireExperiment(tx, organizationId, id);
    assertCanUpdate(id, current.status);
    tx.update(experiments)
      .set({
        name: write.name,
        description: write.description,
        updatedAt: nowIso(),
        lastUpdatedBy: writtenBy,
      })
      .where(eq(experiments.id, id))
      .run();
    tx.delete(experimentVariants).where(eq(experimentVariants.experimentId, id)).run();
    insertVariants(tx, id, write);
    return requireExperiment(tx, organizationId, id);
  });
}

/** Moves an experiment to a new state inside one write transaction, if its current state allows. */
function changeState(
  tx: SqliteTransaction,
  organizationId: number,
  id: number,
  assertAllowed: (id: number, status: ExperimentStatus) => void,
  status: ExperimentStatus,
  writtenBy: string,
): ExperimentRecord {
  assertAllowed(id, requireExperiment(tx, organizationId, id).status);
  const now = nowIso();
  const stamp = status === 'running' ? { startedAt: now } : { stoppedAt: now };
  tx.update(experiments)
    .set({ status, ...stamp, updatedAt: now, lastUpdatedBy: writtenBy })
    .where(eq(experiments.id, id))
    .run();
  return requireExperiment(tx, organizationId, id);
}

export async function startExperiment(
  db: Db,
  organizationId: number,
  id: number,
  writtenBy: string,
): Promise<ExperimentRecord> {
  try {
    return await withTransaction(db, (tx) =>
      changeState(tx, organizationId, id, assertCanStart, 'running', writtenBy),
    );
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // The unique index on running experiments' target refused: name the one that runs.
    const running = db.orm
      .select({ id: experiments.id, name: experiments.name, targetId: experiments.targetId })
      .from(experiments)
      .where(
        and(
          eq(experiments.status, 'running'),
          sql`${experiments.targetId} = (SELECT ${experiments.targetId} FROM ${experiments} WHERE ${experiments.id} = ${id})`,
        ),
      )
      .get();
    if (!running) throw error;
    throw anotherRunningConflict(running.targetId, running);
  }
}

export async function stopExperiment(
  db: Db,
  organizationId: number,
  id: number,
  writtenBy: string,
): Promise<ExperimentRecord> {
  return withTransaction(db, (tx) =>
    changeState(tx, organizationId, id, assertCanStop, 'stopped', writtenBy),
  );
}

/** Deletes a draft or stopped experiment and its variants; its sessions stay. */
export async function deleteExperiment(db: Db, organizationId: number, id: number): Promise<void> {
  await withTransaction(db, (tx) => {
    const current = requireExperiment(tx, organizationId, id);
    assertCanDelete(id, current.status);
    tx.delete(experiments).where(eq(experiments.id, id)).run();
  });
}

/** Routed sessions per variant id (variants without sessions are absent). */
export async function sessionCountsByVariant(
  db: Db,
  experimentId: number,
): Promise<Map<number, number>> {
  const rows = db.orm
    .select({ variantId: sessions.variantId, n: count() })
    .from(sessions)
    .where(eq(sessions.experimentId, experimentId))
    .groupBy(sessions.variantId)
    .all();
  return new Map(rows.flatMap((r) => (r.variantId === null ? [] : [[r.variantId, r.n] as const])));
}

/** What start warnings need about each variant's agent, in variant order. */
export async function variantAgents(
  db: Db,
  experimentId: number,
): Promise<
  Array<{
    variantName: string;
    agentId: number;
    agentName: string;
    pinnedPromptVersion: number | null;
    promptId: number | null;
  }>
> {
  return db.orm
    .select({
      variantName: experimentVariants.name,
      agentId: agents.id,
      agentName: agents.name,
      pinnedPromptVersion: agents.pinnedPromptVersion,
      promptId: agents.promptId,
    })
    .from(experimentVariants)
    .innerJoin(agents, eq(agents.id, experimentVariants.agentId))
    .where(eq(experimentVariants.experimentId, experimentId))
    .orderBy(asc(experimentVariants.position))
    .all();
}
