import { listAgents, listChannelTargets } from '../../db/repositories/directory.js';
import { AGENT_LIST } from '../../domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../domain/channel-targets.js';
import type { AppRouteHandler } from '../../http/router.js';
import type * as routes from './directory.routes.js';
import { toWireAgent, toWireChannelTarget } from '../../wire/directory.js';
import { readListPage } from '../list-page.js';

export const agentsList: AppRouteHandler<typeof routes.agentsList> = async (c) =>
  c.json(await readListPage(c, c.req.valid('query'), AGENT_LIST, listAgents, toWireAgent), 200);

export const channelTargetsList: AppRouteHandler<typeof routes.channelTargetsList> = async (c) =>
  c.json(
    await readListPage(
      c,
      c.req.valid('query'),
      CHANNEL_TARGET_LIST,
      listChannelTargets,
      toWireChannelTarget,
    ),
    200,
  );
