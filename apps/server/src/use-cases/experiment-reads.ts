// What the API and the CLI read of experiments: as they read now, so one running past its end_at
// reads as stopped (domain/experiments.ts `asOf`) whether or not storage has caught up; and the
// pages of an experiment's history.

import type { Db } from '../db/engine/client.js';
import type { ExperimentChangeProperty, ExperimentProperty } from '../vocabulary/experiments.js';
import type { ListedPage, ListQuery } from '../vocabulary/list-query.js';
import { runSteps } from '../db/engine/portable-sql.js';
import {
  readHistoryPage,
  type ExperimentChangeRecord,
} from '../db/repositories/experiment-history.js';
import {
  sessionCountsByBucket,
  sessionCountsByVariant,
  type TimelineCount,
} from '../db/repositories/experiment-results.js';
import {
  listExperiments as listStoredExperiments,
  readExperiment,
  type ExperimentRecord,
} from '../db/repositories/experiments.js';
import { InputRuleError, RecordNotFoundError } from '../domain/errors.js';
import { asOf } from '../domain/experiments.js';
import { timelineBounds, zoneNamed, type TimelineInterval } from '../domain/experiment-timeline.js';
import { nowIso } from '../domain/timestamps.js';

/** The organization's experiment `id` as it reads now, or null without one. */
export async function readExperimentNow(
  db: Db,
  organizationId: number,
  id: number,
): Promise<ExperimentRecord | null> {
  const record = await runSteps(db, () => readExperiment(organizationId, id));
  return record && asOf(record, nowIso());
}

/** The organization's experiment `id` as it reads now; not found without one. */
export async function requireExperimentNow(
  db: Db,
  organizationId: number,
  id: number,
): Promise<ExperimentRecord> {
  const record = await readExperimentNow(db, organizationId, id);
  if (!record) throw new RecordNotFoundError(`There is no experiment ${id} in this organization.`);
  return record;
}

export async function listExperiments(
  db: Db,
  organizationId: number,
  query: ListQuery<ExperimentProperty>,
): Promise<ListedPage<ExperimentRecord>> {
  const page = await listStoredExperiments(db, organizationId, query);
  const now = nowIso();
  return { ...page, records: page.records.map((record) => asOf(record, now)) };
}

/** The experiment and its routed sessions per variant id. */
export async function experimentResults(
  db: Db,
  organizationId: number,
  id: number,
): Promise<{ record: ExperimentRecord; counts: Map<number, number> }> {
  const record = await requireExperimentNow(db, organizationId, id);
  return { record, counts: await sessionCountsByVariant(db, id) };
}

export interface TimelineAsked {
  interval: TimelineInterval;
  timeZone: string;
  startDatetime?: string | undefined;
  endDatetime?: string | undefined;
}

/** The experiment, its timeline's bucket bounds (ISO text) and the sessions per bucket. */
export async function experimentTimeline(
  db: Db,
  organizationId: number,
  id: number,
  asked: TimelineAsked,
): Promise<{
  record: ExperimentRecord;
  timeZone: string;
  bounds: string[];
  counts: TimelineCount[];
}> {
  const record = await requireExperimentNow(db, organizationId, id);
  const zone = zoneNamed(asked.timeZone);
  if (!zone) {
    throw new InputRuleError([
      {
        loc: ['query', 'time_zone'],
        msg: `"${asked.timeZone}" is not an IANA time zone name; use one such as UTC, Europe/Paris or America/New_York.`,
        type: 'value_error',
      },
    ]);
  }
  const bounds = timelineBounds(
    {
      interval: asked.interval,
      zone,
      startDatetime: asked.startDatetime,
      endDatetime: asked.endDatetime,
    },
    record,
    Date.now(),
  ).map((instant) => new Date(instant).toISOString());
  const counts = await sessionCountsByBucket(db, id, bounds);
  return { record, timeZone: zone.name, bounds, counts };
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
): Promise<ListedPage<ExperimentChangeRecord>> {
  const page = await readHistoryPage(db, organizationId, experimentId, query);
  if (!page) {
    throw new RecordNotFoundError(`There is no experiment ${experimentId} in this organization.`);
  }
  return page;
}
