// An experiment as storage holds it (its target and variants joined in), read one at a time by
// every change and planned end, and in pages by the list. The queries are written once for both
// backends (portable-sql.ts); what the rows mean is the use-cases' and the domain's business.

import { sql } from 'drizzle-orm';
import { idEquals, idIn, selectList, selectRows, type Steps } from '../engine/portable-sql.js';
import {
  agents,
  channels,
  channelTargets,
  experiments,
  experimentVariants,
} from '../schema/sqlite.js';
import type { EndedReason, ExperimentStatus } from '../../vocabulary/experiments.js';

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

export type ExperimentRow = Omit<ExperimentRecord, 'variants' | 'target'> & {
  channelTarget: string;
  targetMode: string;
  channelId: number;
  channelName: string;
};

export const EXPERIMENT_FIELDS = {
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

export const EXPERIMENTS_WITH_TARGETS = sql`${experiments}
  INNER JOIN ${channelTargets} ON ${channelTargets.id} = ${experiments.targetId}
  INNER JOIN ${channels} ON ${channels.id} = ${channelTargets.channelId}`;

const SELECT_EXPERIMENTS = sql`SELECT ${selectList(EXPERIMENT_FIELDS)} FROM ${EXPERIMENTS_WITH_TARGETS}`;

type VariantRow = Omit<VariantRecord, 'isControl'> & {
  experimentId: number;
  /** 0 or 1 on SQLite, a boolean on PostgreSQL. */
  isControl: unknown;
};

/** Adds the variants to experiment rows: one query for any number of experiments. */
export function* withVariants(rows: ExperimentRow[]): Steps<ExperimentRecord[]> {
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
