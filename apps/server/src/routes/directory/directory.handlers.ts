import { cursorSigner } from '../../serving/cursor-signer.js';
import { listAgents, listChannelTargets } from '../../db/repositories/directory.js';
import { AGENT_LIST } from '../../domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../domain/channel-targets.js';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import type { AppRouteHandler } from '../../http/router.js';
import type * as routes from './directory.routes.js';
import {
  toWireAgent,
  toWireChannelTarget,
  type WireAgent,
  type WireChannelTarget,
} from '../../wire/directory.js';

export const agentsList: AppRouteHandler<typeof routes.agentsList> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(AGENT_LIST, c.req.valid('query'), organizationId, signer);
  const { records, totalCount, next } = await listAgents(db, organizationId, query);
  const items = records.map((record) =>
    projectItem<WireAgent, 'id'>(toWireAgent(record), query.projection),
  );
  return c.json(listPage(items, query, totalCount, next, signer), 200);
};

export const channelTargetsList: AppRouteHandler<typeof routes.channelTargetsList> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(
    CHANNEL_TARGET_LIST,
    c.req.valid('query'),
    organizationId,
    signer,
  );
  const { records, totalCount, next } = await listChannelTargets(db, organizationId, query);
  const items = records.map((record) =>
    projectItem<WireChannelTarget, 'id'>(toWireChannelTarget(record), query.projection),
  );
  return c.json(listPage(items, query, totalCount, next, signer), 200);
};
