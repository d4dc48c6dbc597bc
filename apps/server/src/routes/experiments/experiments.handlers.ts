import type { Context } from 'hono';
import {
  EXPERIMENT_LIST,
  experimentHistoryList,
  type ChangeAuthor,
} from '../../domain/experiments.js';
import { pagingOnly } from '../../domain/list-query.js';
import type { AppEnv } from '../../http/app-env.js';
import type { AppRouteHandler } from '../../http/router.js';
import {
  createExperiment,
  deleteExperiment,
  startExperiment,
  stopExperiment,
  updateExperiment,
} from '../../use-cases/experiment-changes.js';
import {
  experimentHistoryPage,
  experimentResults,
  experimentTimeline,
  listExperiments,
  requireExperimentNow,
} from '../../use-cases/experiment-reads.js';
import {
  toWireChange,
  toWireExperiment,
  toWireResults,
  toWireTimeline,
} from '../../wire/experiments.js';
import { readListPage, readPage } from '../list-page.js';
import type * as routes from './experiments.routes.js';

/** The API key of the request as the author of the change it makes, with the request's id. */
function authorOf(c: Context<AppEnv>): ChangeAuthor {
  const { keyId, keyName } = c.get('auth');
  return { actor: { type: 'api_key', keyId, keyName }, requestId: c.get('requestId') };
}

export const experimentsList: AppRouteHandler<typeof routes.experimentsList> = async (c) =>
  c.json(
    await readListPage(c, c.req.valid('query'), EXPERIMENT_LIST, listExperiments, toWireExperiment),
    200,
  );

export const experimentsCreate: AppRouteHandler<typeof routes.experimentsCreate> = async (c) => {
  const { organizationId } = c.get('auth');
  const record = await createExperiment(
    c.get('db'),
    organizationId,
    c.req.valid('json'),
    authorOf(c),
  );
  return c.json(toWireExperiment(record), 200);
};

export const experimentsGet: AppRouteHandler<typeof routes.experimentsGet> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  const record = await requireExperimentNow(c.get('db'), c.get('auth').organizationId, id);
  return c.json(toWireExperiment(record), 200);
};

export const experimentsUpdate: AppRouteHandler<typeof routes.experimentsUpdate> = async (c) => {
  const { organizationId } = c.get('auth');
  const { experiment_id: id } = c.req.valid('param');
  const record = await updateExperiment(
    c.get('db'),
    organizationId,
    id,
    c.req.valid('json'),
    authorOf(c),
  );
  return c.json(toWireExperiment(record), 200);
};

export const experimentsDelete: AppRouteHandler<typeof routes.experimentsDelete> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  await deleteExperiment(c.get('db'), c.get('auth').organizationId, id, authorOf(c));
  return c.json({ id, deleted: true as const }, 200);
};

export const experimentsStart: AppRouteHandler<typeof routes.experimentsStart> = async (c) => {
  const { organizationId } = c.get('auth');
  const { experiment_id: id } = c.req.valid('param');
  const { record, warnings } = await startExperiment(c.get('db'), organizationId, id, authorOf(c));
  return c.json({ experiment: toWireExperiment(record), warnings }, 200);
};

export const experimentsStop: AppRouteHandler<typeof routes.experimentsStop> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  const { organizationId } = c.get('auth');
  const record = await stopExperiment(c.get('db'), organizationId, id, authorOf(c));
  return c.json(toWireExperiment(record), 200);
};

export const experimentsResults: AppRouteHandler<typeof routes.experimentsResults> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  const { record, counts } = await experimentResults(c.get('db'), c.get('auth').organizationId, id);
  return c.json(toWireResults(record, counts), 200);
};

export const experimentsResultsTimeline: AppRouteHandler<
  typeof routes.experimentsResultsTimeline
> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  const query = c.req.valid('query');
  const interval = query.interval ?? 'day';
  const { record, timeZone, bounds, counts } = await experimentTimeline(
    c.get('db'),
    c.get('auth').organizationId,
    id,
    {
      interval,
      timeZone: query.time_zone ?? 'UTC',
      startDatetime: query.start_datetime,
      endDatetime: query.end_datetime,
    },
  );
  return c.json(toWireTimeline(record, { interval, timeZone }, bounds, counts), 200);
};

export const experimentsHistory: AppRouteHandler<typeof routes.experimentsHistory> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  // The history pages like the other lists but has nothing to search, order by or narrow.
  const page = await readPage(
    c,
    pagingOnly(c.req.valid('query')),
    experimentHistoryList(id),
    (db, organizationId, query) => experimentHistoryPage(db, organizationId, id, query),
    toWireChange,
  );
  return c.json(page, 200);
};
