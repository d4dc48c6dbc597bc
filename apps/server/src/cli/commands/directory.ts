// What an operator (or an API customer's admin) needs to write an experiment or call the API:
// the ids of the organization's agents, channels and channel targets.

import type { Db } from '../../db/client.js';
import { cursorSigner } from '../../db/cursor-signer.js';
import {
  listAgents,
  listChannels,
  listChannelTargets,
  type ListedPage,
} from '../../db/repositories/directory.js';
import { AGENT_LIST } from '../../domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../domain/channel-targets.js';
import {
  encodeCursor,
  parseListQuery,
  type ListQuery,
  type ListResource,
} from '../../domain/list-query.js';
import { UsageError } from '../cli-error.js';
import { stringOption, type Command } from '../command.js';
import { toWireAgent, toWireChannelTarget } from '../../routes/directory/directory.wire.js';
import { formatTable } from '../table.js';

/** Every record of a list, by id, following its cursors a thousand at a time. */
async function everyRecord<P extends string, R>(
  db: Db,
  organizationId: number,
  resource: ListResource<P>,
  list: (db: Db, organizationId: number, query: ListQuery<P>) => Promise<ListedPage<R>>,
): Promise<R[]> {
  const records: R[] = [];
  let cursor: string | undefined;
  for (;;) {
    const signer = await cursorSigner(db);
    const query = await parseListQuery(
      resource,
      { page: 0, limit: 1000, search_fields: [], search_field_values: [], fields: [], cursor },
      organizationId,
      signer,
    );
    const page = await list(db, organizationId, query);
    records.push(...page.records);
    if (!page.next) return records;
    cursor = encodeCursor(query, page.next, signer);
  }
}

interface Listing {
  /** What the records are, for "has no ... yet". */
  noun: string;
  /** The records as --json prints them (as the API lists them), and as table rows. */
  read(db: Db, organizationId: number): Promise<{ records: unknown[]; table: string[][] }>;
}

function listing<R>(
  noun: string,
  read: (db: Db, organizationId: number) => Promise<R[]>,
  toJson: (record: R) => unknown,
  header: string[],
  row: (record: R) => string[],
): Listing {
  return {
    noun,
    async read(db, organizationId) {
      const records = await read(db, organizationId);
      return { records: records.map(toJson), table: [header, ...records.map(row)] };
    },
  };
}

const orNone = (value: number | null) => (value === null ? '-' : String(value));

const LISTINGS = new Map<string, Listing>([
  [
    'agents',
    listing(
      'agents',
      (db, organizationId) => everyRecord(db, organizationId, AGENT_LIST, listAgents),
      toWireAgent,
      ['ID', 'NAME', 'PROMPT ID', 'PINNED VERSION'],
      (agent) => [
        String(agent.id),
        agent.name,
        orNone(agent.promptId),
        agent.pinnedPromptVersion === null ? 'latest' : String(agent.pinnedPromptVersion),
      ],
    ),
  ],
  [
    'channels',
    listing(
      'channels',
      listChannels,
      (channel) => ({
        id: channel.id,
        name: channel.name,
        kind: channel.kind,
        provider: channel.provider,
        target_count: channel.targetCount,
        number_count: channel.numberCount,
      }),
      ['ID', 'NAME', 'KIND', 'PROVIDER', 'TARGETS', 'NUMBERS'],
      (channel) => [
        String(channel.id),
        channel.name,
        channel.kind,
        channel.provider ?? '-',
        String(channel.targetCount),
        String(channel.numberCount),
      ],
    ),
  ],
  [
    'targets',
    listing(
      'channel targets',
      (db, organizationId) =>
        everyRecord(db, organizationId, CHANNEL_TARGET_LIST, listChannelTargets),
      toWireChannelTarget,
      ['ID', 'CHANNEL', 'TARGET', 'MODE', 'AGENT ID', 'AGENT TEST'],
      (target) => [
        String(target.id),
        target.channelName,
        target.target,
        target.targetMode,
        orNone(target.agentId),
        target.isAgentTest ? 'yes' : 'no',
      ],
    ),
  ],
]);

export const LIST_NAMES = [...LISTINGS.keys()];

export const listCommand: Command = {
  words: ['list'],
  positionals: [`<${LIST_NAMES.join('|')}>`],
  summary:
    "List an organization's agents, channels or channel targets with their ids, which experiments and API calls name.",
  optionHelp: [
    ['--org <id|name>', 'the organization'],
    ['--json', 'print one JSON array of the records instead of a table'],
  ],
  details: [
    'Channels are listed without their provider settings and secrets. Examples:',
    '  agentline list agents --org "Acme Support"',
    '  agentline list targets --org 1 --json',
  ].join('\n'),
  options: { org: { type: 'string' }, json: { type: 'boolean' } },
  requiredOptions: ['org'],
  async run(context, values, [name]) {
    const chosen = LISTINGS.get(name!);
    if (!chosen) {
      throw new UsageError(
        `unknown list "${name}"`,
        `name one of: ${LIST_NAMES.join(', ')}; for example: agentline list ${LIST_NAMES[0]} --org <id|name>`,
      );
    }
    const organization = await context.organization(stringOption(values, 'org'));
    const { records, table } = await chosen.read(await context.db(), organization.id);
    if (values.json) {
      context.out(JSON.stringify(records, null, 2));
      return;
    }
    if (records.length === 0) {
      context.note(
        `organization "${organization.name}" has no ${chosen.noun} yet; add them with "agentline load"`,
      );
      return;
    }
    for (const line of formatTable(table)) context.out(line);
  },
};
