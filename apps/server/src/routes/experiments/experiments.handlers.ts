import type { Context } from 'hono';
import {
  createExperiment,
  deleteExperiment,
  experimentHistoryPage,
  findAgentIds,
  findExperimentTarget,
  getExperiment,
  listExperiments,
  replaceDraftExperiment,
  sessionCountsByBucket,
  sessionCountsByVariant,
  startExperiment,
  stopExperiment,
  type ExperimentWrite,
} from '../../db/repositories/experiments.js';
import type { Db } from '../../db/engine/client.js';
import { cursorSigner } from '../../serving/cursor-signer.js';
import { InputRuleError, RecordNotFoundError, type InputProblem } from '../../domain/errors.js';
import {
  EXPERIMENT_LIST,
  assertCanUpdate,
  missingAgentProblems,
  targetChangeProblems,
  targetProblems,
  variantSetProblems,
  type VariantInput,
} from '../../domain/experiments.js';
import { timelineBounds, zoneNamed } from '../../domain/experiment-timeline.js';
import { experimentHistoryList, type ChangeAuthor } from '../../domain/experiment-history.js';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import { normalizeDateTime } from '../../domain/timestamps.js';
import type { AppEnv } from '../../http/app-env.js';
import type { AppRouteHandler } from '../../http/router.js';
import {
  toWireChange,
  toWireExperiment,
  toWireResults,
  toWireTimeline,
  type WireExperiment,
} from '../../wire/experiments.js';
import { experimentStartWarnings } from './start-warnings.js';
import type * as routes from './experiments.routes.js';

function notFound(id: number): RecordNotFoundError {
  return new RecordNotFoundError(`There is no experiment ${id} in this organization.`);
}

/** The API key of the request as the author of the change it makes, with the request's id. */
function authorOf(c: Context<AppEnv>): ChangeAuthor {
  const { keyId, keyName } = c.get('auth');
  return { actor: { type: 'api_key', keyId, keyName }, requestId: c.get('requestId') };
}

async function requireExperiment(db: Db, organizationId: number, id: number) {
  const record = await getExperiment(db, organizationId, id);
  if (!record) throw notFound(id);
  return record;
}

/** Checks a create or update body against every experiment rule and returns what to store. */
async function checkedWrite(
  db: Db,
  organizationId: number,
  body: {
    name: string;
    description?: string | null | undefined;
    variants: VariantInput[];
    end_at?: string | null | undefined;
    max_sessions?: number | null | undefined;
  },
  targetProblemsFound: InputProblem[],
): Promise<ExperimentWrite> {
  const agentIds = await findAgentIds(
    db,
    organizationId,
    body.variants.map((v) => v.agent_id),
  );
  // Stored as canonical ISO text, so routing compares it with the clock as text.
  const endAt = body.end_at == null ? null : normalizeDateTime(body.end_at);
  const problems: InputProblem[] = [
    ...targetProblemsFound,
    ...(body.end_at != null && endAt === null
      ? [
          {
            loc: ['body', 'end_at'],
            msg: `"${body.end_at}" is not a date-time between the years 0 and 9999 with a time zone; send ISO 8601 such as 2026-12-31T23:00:00Z.`,
            type: 'datetime_parsing',
          },
        ]
      : []),
    ...variantSetProblems(body.variants.map((v) => ({ ...v, agent: v.agent_id }))),
    ...missingAgentProblems(body.variants, agentIds),
  ];
  if (problems.length > 0) throw new InputRuleError(problems);
  return {
    name: body.name,
    description: body.description ?? null,
    endAt,
    maxSessions: body.max_sessions ?? null,
    variants: body.variants.map((v) => ({
      name: v.name,
      weight: v.weight,
      isControl: v.is_control ?? false,
      agentId: v.agent_id,
    })),
  };
}

export const experimentsList: AppRouteHandler<typeof routes.experimentsList> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(EXPERIMENT_LIST, c.req.valid('query'), organizationId, signer);
  const { records, totalCount, next } = await listExperiments(db, organizationId, query);
  const items = records.map((record) =>
    projectItem<WireExperiment, 'id'>(toWireExperiment(record), query.projection),
  );
  return c.json(listPage(items, query, totalCount, next, signer), 200);
};

export const experimentsCreate: AppRouteHandler<typeof routes.experimentsCreate> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const body = c.req.valid('json');
  const target = await findExperimentTarget(db, organizationId, body.target_id);
  const write = await checkedWrite(
    db,
    organizationId,
    body,
    targetProblems(body.target_id, target),
  );
  const record = await createExperiment(db, organizationId, body.target_id, write, authorOf(c));
  return c.json(toWireExperiment(record), 200);
};

export const experimentsGet: AppRouteHandler<typeof routes.experimentsGet> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  const record = await requireExperiment(c.get('db'), c.get('auth').organizationId, id);
  return c.json(toWireExperiment(record), 200);
};

export const experimentsUpdate: AppRouteHandler<typeof routes.experimentsUpdate> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const { experiment_id: id } = c.req.valid('param');
  const body = c.req.valid('json');
  const current = await requireExperiment(db, organizationId, id);
  // The state rule comes first: no body makes a running experiment editable.
  assertCanUpdate(id, current.status);
  const write = await checkedWrite(
    db,
    organizationId,
    body,
    targetChangeProblems(current.targetId, body.target_id, ['body', 'target_id']),
  );
  const record = await replaceDraftExperiment(db, organizationId, id, write, authorOf(c));
  return c.json(toWireExperiment(record), 200);
};

export const experimentsDelete: AppRouteHandler<typeof routes.experimentsDelete> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  await deleteExperiment(c.get('db'), c.get('auth').organizationId, id, authorOf(c));
  return c.json({ id, deleted: true as const }, 200);
};

export const experimentsStart: AppRouteHandler<typeof routes.experimentsStart> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const { experiment_id: id } = c.req.valid('param');
  const record = await startExperiment(db, organizationId, id, authorOf(c));
  const warnings = await experimentStartWarnings(db, organizationId, id);
  return c.json({ experiment: toWireExperiment(record), warnings }, 200);
};

export const experimentsStop: AppRouteHandler<typeof routes.experimentsStop> = async (c) => {
  const { experiment_id: id } = c.req.valid('param');
  const { organizationId } = c.get('auth');
  const record = await stopExperiment(c.get('db'), organizationId, id, authorOf(c));
  return c.json(toWireExperiment(record), 200);
};

export const experimentsResults: AppRouteHandler<typeof routes.experimentsResults> = async (c) => {
  const db = c.get('db');
  const { experiment_id: id } = c.req.valid('param');
  const record = await requireExperiment(db, c.get('auth').organizationId, id);
  return c.json(toWireResults(record, await sessionCountsByVariant(db, id)), 200);
};

export const experimentsResultsTimeline: AppRouteHandler<
  typeof routes.experimentsResultsTimeline
> = async (c) => {
  const db = c.get('db');
  const { experiment_id: id } = c.req.valid('param');
  const query = c.req.valid('query');
  const interval = query.interval ?? 'day';
  const timeZone = query.time_zone ?? 'UTC';
  const record = await requireExperiment(db, c.get('auth').organizationId, id);
  const zone = zoneNamed(timeZone);
  if (!zone) {
    throw new InputRuleError([
      {
        loc: ['query', 'time_zone'],
        msg: `"${timeZone}" is not an IANA time zone name; use one such as UTC, Europe/Paris or America/New_York.`,
        type: 'value_error',
      },
    ]);
  }
  const bounds = timelineBounds(
    { interval, zone, startDatetime: query.start_datetime, endDatetime: query.end_datetime },
    record,
    Date.now(),
  ).map((instant) => new Date(instant).toISOString());
  const counts = await sessionCountsByBucket(db, id, bounds);
  return c.json(toWireTimeline(record, { interval, timeZone: zone.name }, bounds, counts), 200);
};

export const experimentsHistory: AppRouteHandler<typeof routes.experimentsHistory> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const { experiment_id: id } = c.req.valid('param');
  // The history pages like the other lists but has nothing to search, order by or narrow.
  const signer = await cursorSigner(db);
  const query = await parseListQuery(
    experimentHistoryList(id),
    { ...c.req.valid('query'), search_fields: [], search_field_values: [], fields: [] },
    organizationId,
    signer,
  );
  const { records, totalCount, next } = await experimentHistoryPage(db, organizationId, id, query);
  return c.json(listPage(records.map(toWireChange), query, totalCount, next, signer), 200);
};
