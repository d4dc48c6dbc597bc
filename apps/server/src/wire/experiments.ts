// The one place an experiment record becomes a wire Experiment (shape from the spec's generated
// types, every property present).

import type { ExperimentChangeRecord } from '../db/repositories/experiment-history.js';
import type { ExperimentRecord } from '../db/repositories/experiments.js';
import type { TimelineCount } from '../db/repositories/experiment-results.js';
import type { ChangeActor } from '../vocabulary/experiments.js';
import type { components } from '../spec-types.js';

export type WireExperiment = Required<components['schemas']['Experiment']>;

export function toWireExperiment(record: ExperimentRecord): WireExperiment {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    target_id: record.targetId,
    status: record.status,
    variants: record.variants.map((v) => ({
      id: v.id,
      name: v.name,
      weight: v.weight,
      is_control: v.isControl,
      agent_id: v.agentId,
      agent_name: v.agentName,
    })),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    last_updated_by: record.lastUpdatedBy,
    started_at: record.startedAt,
    stopped_at: record.stoppedAt,
    end_at: record.endAt,
    max_sessions: record.maxSessions,
    ended_reason: record.endedReason,
    target: {
      id: record.target.id,
      target: record.target.target,
      target_mode: record.target.targetMode,
      channel_id: record.target.channelId,
      channel_name: record.target.channelName,
    },
  };
}

export type WireExperimentResults = components['schemas']['ExperimentResults'];

/** The results: `counts` are routed sessions per variant id (a variant without any is absent). */
export function toWireResults(
  record: ExperimentRecord,
  counts: ReadonlyMap<number, number>,
): WireExperimentResults {
  const total = record.variants.reduce((sum, v) => sum + (counts.get(v.id) ?? 0), 0);
  return {
    experiment_id: record.id,
    status: record.status,
    total_sessions: total,
    variants: record.variants.map((v) => {
      const sessionCount = counts.get(v.id) ?? 0;
      return {
        variant_id: v.id,
        name: v.name,
        weight: v.weight,
        is_control: v.isControl,
        session_count: sessionCount,
        share: total === 0 ? 0 : sessionCount / total,
      };
    }),
  };
}

export type WireExperimentTimeline = components['schemas']['ExperimentTimeline'];

/** The timeline: `bounds` as timelineBounds gives them, `counts` as sessionCountsByBucket does. */
export function toWireTimeline(
  record: ExperimentRecord,
  timeline: { interval: WireExperimentTimeline['interval']; timeZone: string },
  bounds: readonly string[],
  counts: readonly TimelineCount[],
): WireExperimentTimeline {
  const perBucket = bounds.slice(1).map(() => new Map<number, number>());
  for (const { bucket, variantId, n } of counts) perBucket[bucket]?.set(variantId, n);
  return {
    experiment_id: record.id,
    interval: timeline.interval,
    time_zone: timeline.timeZone,
    buckets: perBucket.map((bucketCounts, bucket) => ({
      start: bounds[bucket]!,
      variants: record.variants.map((v) => ({
        variant_id: v.id,
        session_count: bucketCounts.get(v.id) ?? 0,
      })),
    })),
  };
}

export type WireExperimentChange = components['schemas']['ExperimentChange'];

/** Who made a change, as the history and the status-change webhook message show it. */
export function toWireActor(actor: ChangeActor): components['schemas']['ExperimentChangeActor'] {
  return actor.type === 'api_key'
    ? { type: 'api_key', key_id: actor.keyId, key_name: actor.keyName }
    : { type: actor.type };
}

export function toWireChange(record: ExperimentChangeRecord): WireExperimentChange {
  return {
    id: record.id,
    experiment_id: record.experimentId,
    occurred_at: record.occurredAt,
    action: record.action,
    actor: toWireActor(record.actor),
    request_id: record.requestId,
    changes: record.changes as WireExperimentChange['changes'],
  };
}
