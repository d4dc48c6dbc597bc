import type { ListQuery } from '../../vocabulary/list-query.js';
import type { PromptProperty } from '../../vocabulary/prompts.js';
import { jsonText } from '../../vocabulary/json-text.js';
import {
  listPage,
  parseListQuery,
  projectItem,
  type CursorSigner,
} from '../../domain/list-query.js';
import { PROMPT_LIST, projectionShowsTools } from '../../domain/prompts.js';
import type { Db } from '../../db/engine/client.js';
import { cursorSigner } from '../../runtime/cursor-signer.js';
import { recordsVersion } from '../../db/repositories/organizations.js';
import { listPrompts } from '../../db/repositories/prompts.js';
import { jsonTextResponse, KeptListAnswers } from '../../http/versioned-cache.js';
import type { AppRouteHandler } from '../../http/router.js';
import type { components } from '../../spec-types.js';
import * as routes from './prompts.routes.js';
import { toWirePrompt, toWireTools, type WirePrompt } from '../../wire/prompts.js';

type PromptListResponse = components['schemas']['PromptListResponse'];

// A full page carries every tool of 25 prompts with the prompts and agents using each: building
// it costs tens of milliseconds, while the records behind it change only when an operator loads
// new ones. Pages are kept per organization and query until that happens.
// Cursor pages as well: every page is as dear to build, and as rarely changed.
const keptAnswers = new KeptListAnswers<PromptListResponse>(routes.promptsList, recordsVersion, {
  keepsCursorPages: true,
});

/** Route middleware of promptsList: a kept answer, ahead of the query's validation. */
export const keptPromptsAnswer = keptAnswers.serve;

async function buildPage(
  db: Db,
  organizationId: number,
  query: ListQuery<PromptProperty>,
  signer: CursorSigner,
) {
  // Items narrowed to fields that show no tool object do not need the tools loaded: the keys
  // computed from them (tools_full, session_end_tool, validation_issues) are projected away.
  const page = await listPrompts(db, organizationId, query, {
    withTools: projectionShowsTools(query.projection),
  });
  const tools = toWireTools(page.tools);
  const items = page.rows.map((row) =>
    projectItem<WirePrompt, 'id'>(toWirePrompt(row, tools), query.projection),
  );
  return listPage(items, query, page.totalCount, page.next, signer);
}

export const promptsList: AppRouteHandler<typeof routes.promptsList> = async (c) => {
  const db = c.get('db');
  const { organizationId } = c.get('auth');
  const signer = await cursorSigner(db);
  const query = await parseListQuery(PROMPT_LIST, c.req.valid('query'), organizationId, signer);
  const version = await recordsVersion(db, organizationId);
  const json = jsonText<PromptListResponse>(await buildPage(db, organizationId, query, signer));
  keptAnswers.keep(c, signer, version, json);
  return jsonTextResponse(c, json);
};
