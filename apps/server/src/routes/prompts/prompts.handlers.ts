import type { RouteHandler } from '@hono/zod-openapi';
import { listPage, parseListQuery, projectItem } from '../../domain/list-query.js';
import { PROMPT_LIST, projectionShowsTools } from '../../domain/prompts.js';
import { listPrompts } from '../../db/repositories/prompts.js';
import type { AppEnv } from '../../http/app-env.js';
import type * as routes from './prompts.routes.js';
import { toWirePrompt, toWireTools, type WirePrompt } from './prompts.wire.js';

export const promptsList: RouteHandler<typeof routes.promptsList, AppEnv> = async (c) => {
  const query = parseListQuery(PROMPT_LIST, c.req.valid('query'));
  // Items narrowed to fields that show no tool object do not need the tools loaded: the keys
  // computed from them (tools_full, session_end_tool, validation_issues) are projected away.
  const page = await listPrompts(c.get('db'), c.get('auth').organizationId, query, {
    withTools: projectionShowsTools(query.projection),
  });
  const tools = toWireTools(page.tools);
  const items = page.rows.map((row) =>
    projectItem<WirePrompt, 'id'>(toWirePrompt(row, tools), query.projection),
  );
  return c.json(listPage(items, query, page.totalCount), 200);
};
