// What an operator (or an API customer's admin) needs to write an experiment or call the API:
// the ids of the organization's agents, channels and channel targets; and its telephony numbers
// with the A2P check of each, to find the ones whose texts are filtered and why.

import type { Db } from '../../db/engine/client.js';
import spec from '../../generated/openapi.json' with { type: 'json' };
import { cursorSigner } from '../../runtime/cursor-signer.js';
import { listAgents, listChannels, listChannelTargets } from '../../db/repositories/directory.js';
import type { ListedPage, ListQuery } from '../../vocabulary/list-query.js';
import { AGENT_LIST } from '../../domain/agents.js';
import { CHANNEL_TARGET_LIST } from '../../domain/channel-targets.js';
import { findTelephonyChannel } from '../../db/repositories/telephony.js';
import { a2pStatusList } from '../../domain/a2p.js';
import { encodeCursor, parseListQuery, type ListResource } from '../../domain/list-query.js';
import { a2pStatusPage, type NumberA2pStatus } from '../../providers/channel-provider.js';
import { ProviderUnavailableError } from '../../providers/telephony-provider.js';
import { CliError, UsageError } from '../cli-error.js';
import {
  isRecordId,
  orgOption,
  stringOption,
  type Command,
  type OptionValues,
} from '../command.js';
import { toWireAgent, toWireChannelTarget } from '../../wire/directory.js';
import { toWireA2pVerdict } from '../../wire/telephony.js';
import { formatTable } from '../table.js';

/** The largest page the API serves, from the contract's `limit` parameter. */
const MAX_PAGE_SIZE = spec.components.parameters.Limit.schema.maximum;

/** Every record of a list, by id, following its cursors a thousand at a time. */
export async function everyRecord<P extends string, R>(
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
      {
        page: 0,
        limit: MAX_PAGE_SIZE,
        search_fields: [],
        search_field_values: [],
        fields: [],
        cursor,
      },
      organizationId,
      signer,
    );
    const page = await list(db, organizationId, query);
    records.push(...page.records);
    if (!page.next) return records;
    cursor = encodeCursor(query, page.next, signer);
  }
}

interface NumberStatus extends NumberA2pStatus {
  channelId: number;
}

/**
 * The telephony numbers of one channel, or of every telephony channel of the organization, in
 * phone order per channel, each with the A2P check the API's status list gives it: one bulk read
 * of the channel's provider per thousand numbers. A provider that cannot answer stops the whole
 * listing, as it fails the API's whole page: a number left out or shown as failing because a
 * read failed would look like an answer.
 */
async function numberStatuses(
  db: Db,
  organizationId: number,
  channelId: number | undefined,
): Promise<NumberStatus[]> {
  const channelIds =
    channelId === undefined
      ? (await listChannels(db, organizationId))
          .filter((channel) => channel.kind === 'telephony')
          .map((channel) => channel.id)
      : [channelId];
  const numbers: NumberStatus[] = [];
  for (const id of channelIds) {
    const channel = await findTelephonyChannel(db, organizationId, id);
    if (!channel) {
      throw new CliError(
        `the organization has no telephony channel with id ${id}`,
        'see its channels and their ids with: agentline list channels --org <id|name>',
      );
    }
    try {
      const statuses = await everyRecord(db, organizationId, a2pStatusList(id), (_, __, query) =>
        a2pStatusPage(channel, db, organizationId, query),
      );
      numbers.push(...statuses.map((status) => ({ channelId: id, ...status })));
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error;
      throw new CliError(
        `the telephony provider (${channel.provider}) of channel ${id} could not answer: ${error.message}; nothing is listed`,
        `try again, check the channel's provider settings, or list another channel with --channel <id>`,
      );
    }
  }
  return numbers;
}

interface Listing {
  /** What the records are, for "has no ... yet". */
  noun: string;
  /** Whether `--channel <id>` narrows it to the records of one channel. */
  byChannel?: boolean;
  /** The records as --json prints them (as the API lists them), and as table rows. */
  read(
    db: Db,
    organizationId: number,
    channelId: number | undefined,
  ): Promise<{ records: unknown[]; table: string[][] }>;
}

function listing<R>(
  noun: string,
  read: (db: Db, organizationId: number, channelId: number | undefined) => Promise<R[]>,
  toJson: (record: R) => unknown,
  header: string[],
  row: (record: R) => string[],
): Listing {
  return {
    noun,
    async read(db, organizationId, channelId) {
      const records = await read(db, organizationId, channelId);
      return { records: records.map(toJson), table: [header, ...records.map(row)] };
    },
  };
}

const orNone = (value: number | null) => (value === null ? '-' : String(value));

/** `--channel`: a channel id, as `agentline list channels` shows them. */
function channelOption(values: OptionValues): number | undefined {
  const raw = values.channel;
  if (raw === undefined) return undefined;
  if (!isRecordId(raw)) {
    throw new UsageError(
      `--channel must be a channel id (a whole number from 1), got "${String(raw)}"`,
      'see the ids with: agentline list channels --org <id|name>',
    );
  }
  return Number(raw);
}

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
  [
    'numbers',
    {
      ...listing(
        'telephony numbers',
        numberStatuses,
        ({ channelId, phone, verdict }) => ({
          channel_id: channelId,
          phone,
          ...toWireA2pVerdict(verdict),
        }),
        ['CHANNEL ID', 'PHONE', 'A2P', 'FAILING CHECK', 'DETAIL'],
        ({ channelId, phone, verdict }) => {
          // The first check that failed says what to fix first; the later ones were not reached.
          const failing = verdict.checks.find((check) => check.passed === false);
          return [
            String(channelId),
            phone,
            verdict.approved ? 'approved' : 'no',
            failing?.name ?? '-',
            failing?.detail ?? '-',
          ];
        },
      ),
      byChannel: true,
    },
  ],
]);

export const LIST_NAMES = [...LISTINGS.keys()];

export const listCommand: Command = {
  words: ['list'],
  positionals: [`<${LIST_NAMES.join('|')}>`],
  summary:
    "List an organization's agents, channels or channel targets with their ids, which experiments and API calls name, or its telephony numbers with their A2P status.",
  options: [
    orgOption(),
    ['--channel <id>', 'numbers only: the numbers of this telephony channel (default: every one)'],
    ['--json', 'print one JSON array of the records instead of a table'],
  ],
  details: [
    'Channels are listed without their provider settings and secrets. Numbers are checked',
    "with their channel's provider (a twilio channel is asked over the network), and each shows",
    'the first A2P check it fails with what to fix. Examples:',
    '  agentline list agents --org "Acme Support"',
    '  agentline list targets --org 1 --json',
    '  agentline list numbers --org 1 --channel 2',
  ],
  async run(context, values, [name]) {
    const chosen = LISTINGS.get(name!);
    if (!chosen) {
      throw new UsageError(
        `unknown list "${name}"`,
        `name one of: ${LIST_NAMES.join(', ')}; for example: agentline list ${LIST_NAMES[0]} --org <id|name>`,
      );
    }
    const channelId = channelOption(values);
    if (channelId !== undefined && !chosen.byChannel) {
      throw new UsageError(
        `--channel does not apply to list ${name}`,
        `leave it out, or list numbers: agentline list numbers --org <id|name> --channel ${channelId}`,
      );
    }
    const organization = await context.organization(stringOption(values, 'org'));
    const { records, table } = await chosen.read(await context.db(), organization.id, channelId);
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
