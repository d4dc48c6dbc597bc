// What an operator asks of an organization's webhooks from the command line: its endpoints, an
// endpoint's delivery log, and a replay after a receiver's outage. The same repositories,
// use-case and wire objects as the API (--json prints what it answers).

import type { Db } from '../../db/engine/client.js';
import { listWebhookAttempts } from '../../db/repositories/webhook-deliveries.js';
import {
  findWebhookEndpoint,
  listWebhookEndpoints,
  type WebhookEndpointRecord,
} from '../../db/repositories/webhook-endpoints.js';
import { InputRuleError, RecordNotFoundError } from '../../domain/errors.js';
import { parseListQuery } from '../../domain/list-query.js';
import { WEBHOOK_ENDPOINT_LIST, webhookDeliveryList } from '../../domain/webhooks.js';
import {
  WEBHOOK_DELIVERY_STATUSES,
  type WebhookDeliveryStatus,
} from '../../vocabulary/webhooks.js';
import type { Organization } from '../../db/repositories/organizations.js';
import { cursorSigner } from '../../runtime/cursor-signer.js';
import { resumeTokensOf } from '../../runtime/resume-tokens.js';
import { replayWebhookEndpoint } from '../../use-cases/webhook-replay.js';
import { toWireWebhookDelivery, toWireWebhookEndpoint } from '../../wire/webhooks.js';
import { CliError, UsageError } from '../cli-error.js';
import {
  idArgument,
  orgOption,
  stringOption,
  type Command,
  type OptionValues,
} from '../command.js';
import { formatTable } from '../table.js';
import { everyRecord } from './directory.js';

const LIST_HINT = 'see its endpoints and their ids with: agentline webhooks list --org <id|name>';

function noSuchEndpoint(organization: Organization, id: number): CliError {
  return new CliError(
    `organization "${organization.name}" has no webhook endpoint ${id}`,
    LIST_HINT,
  );
}

async function endpointOf(
  db: Db,
  organization: Organization,
  id: number,
): Promise<WebhookEndpointRecord> {
  const endpoint = await findWebhookEndpoint(db, organization.id, id);
  if (!endpoint) throw noSuchEndpoint(organization, id);
  return endpoint;
}

/** `type=session-ended, ...`, or `every event`. */
function filterOf(endpoint: WebhookEndpointRecord): string {
  if (endpoint.searchFields.length === 0) return 'every event';
  return endpoint.searchFields
    .map((field, i) => `${field}=${endpoint.searchFieldValues[i] ?? ''}`)
    .join(', ');
}

export const webhooksListCommand: Command = {
  words: ['webhooks', 'list'],
  summary:
    "List an organization's webhook endpoints: URL, state, what they receive (never their secrets).",
  options: [orgOption(), ['--json', 'print one JSON array of the endpoints as the API lists them']],
  details: ['Example:', '  agentline webhooks list --org "Acme Support"'],
  async run(context, values) {
    const organization = await context.organization(stringOption(values, 'org'));
    const endpoints = await everyRecord(
      await context.db(),
      organization.id,
      WEBHOOK_ENDPOINT_LIST,
      listWebhookEndpoints,
    );
    if (values.json) {
      context.out(JSON.stringify(endpoints.map(toWireWebhookEndpoint), null, 2));
      return;
    }
    if (endpoints.length === 0) {
      context.note(
        `organization "${organization.name}" has no webhook endpoints yet; create one with POST /api/v1/webhooks/endpoints`,
      );
      return;
    }
    const rows = endpoints.map((endpoint) => [
      String(endpoint.id),
      endpoint.url,
      endpoint.enabled ? 'enabled' : `disabled: ${endpoint.disabledReason ?? 'by its owner'}`,
      endpoint.messageTypes.join(', '),
      endpoint.messageTypes.includes('event') ? filterOf(endpoint) : '-',
      endpoint.createdAt,
    ]);
    const header = ['ID', 'URL', 'STATE', 'TYPES', 'EVENTS', 'CREATED'];
    for (const line of formatTable([header, ...rows])) context.out(line);
  },
};

const DEFAULT_DELIVERIES = 50;
const MAX_DELIVERIES = 1000;

function statusOption(values: OptionValues): WebhookDeliveryStatus | undefined {
  const raw = values.status;
  if (raw === undefined) return undefined;
  const status = WEBHOOK_DELIVERY_STATUSES.find((known) => known === raw);
  if (!status) {
    throw new UsageError(
      `--status "${String(raw)}" is not an outcome of an attempt`,
      `use one of: ${WEBHOOK_DELIVERY_STATUSES.join(', ')}`,
    );
  }
  return status;
}

function limitOption(values: OptionValues): number {
  const raw = values.limit;
  if (raw === undefined) return DEFAULT_DELIVERIES;
  const limit = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= MAX_DELIVERIES)) {
    throw new UsageError(
      `--limit must be a whole number from 1 to ${MAX_DELIVERIES}, got "${String(raw)}"`,
      `leave it out for the newest ${DEFAULT_DELIVERIES} attempts`,
    );
  }
  return limit;
}

export const webhooksDeliveriesCommand: Command = {
  words: ['webhooks', 'deliveries'],
  positionals: ['<endpoint id>'],
  summary:
    "Show a webhook endpoint's delivery log: every attempt of the last 30 days, newest first.",
  options: [
    orgOption(),
    [
      '--status <outcome>',
      `only attempts with this outcome: ${WEBHOOK_DELIVERY_STATUSES.join(', ')}`,
    ],
    [
      '--limit <n>',
      `how many attempts, newest first (default ${DEFAULT_DELIVERIES}, at most ${MAX_DELIVERIES})`,
    ],
    ['--json', 'print one JSON array of the attempts as the API lists them'],
  ],
  details: [
    'An attempt is delivered (a 2xx answer), pending (it failed and will be retried at NEXT), or',
    'failed (the last attempt failed; "agentline webhooks replay" sends the message again).',
    'Example:',
    '  agentline webhooks deliveries 3 --org "Acme Support" --status failed',
  ],
  async run(context, values, [rawId]) {
    const id = idArgument(rawId, 'endpoint', LIST_HINT);
    const status = statusOption(values);
    const limit = limitOption(values);
    const organization = await context.organization(stringOption(values, 'org'));
    const db = await context.db();
    await endpointOf(db, organization, id);
    const query = await parseListQuery(
      webhookDeliveryList(id),
      {
        page: 0,
        limit,
        search_fields: status ? ['status'] : [],
        search_field_values: status ? [status] : [],
        fields: [],
      },
      organization.id,
      await cursorSigner(db),
    );
    const page = await listWebhookAttempts(db, organization.id, id, query);
    if (values.json) {
      context.out(JSON.stringify(page.records.map(toWireWebhookDelivery), null, 2));
      return;
    }
    const what = status ? `${status} attempts` : 'attempts';
    if (page.records.length === 0) {
      context.note(`webhook endpoint ${id} has no ${what} in its delivery log (kept 30 days)`);
      return;
    }
    const rows = page.records.map((attempt) => [
      attempt.attemptedAt,
      attempt.webhookId,
      attempt.type,
      String(attempt.attempt),
      attempt.status,
      attempt.responseStatus === null ? '-' : String(attempt.responseStatus),
      `${attempt.durationMs} ms`,
      attempt.nextAttemptAt ?? '-',
      attempt.error ?? '-',
    ]);
    const header = [
      'ATTEMPTED',
      'WEBHOOK ID',
      'TYPE',
      'TRY',
      'STATUS',
      'HTTP',
      'TOOK',
      'NEXT',
      'ERROR',
    ];
    for (const line of formatTable([header, ...rows])) context.out(line);
    if (page.totalCount > page.records.length) {
      context.note(
        `the newest ${page.records.length} of ${page.totalCount} ${what}; --limit <n> shows more (at most ${MAX_DELIVERIES})`,
      );
    }
  },
};

export const webhooksReplayCommand: Command = {
  words: ['webhooks', 'replay'],
  positionals: ['<endpoint id>'],
  summary: "Send a webhook endpoint's messages again from a point: after a receiver's outage.",
  options: [
    orgOption(),
    [
      '--after-position <token>',
      'everything of its kind (events, or experiment changes) after the message with this position',
    ],
    [
      '--start-datetime <iso>',
      'every event and experiment change from this moment on (ISO 8601 with Z or an offset)',
    ],
  ],
  details: [
    'Give exactly one of --after-position and --start-datetime. The running server sends the',
    'messages again in the background with their original webhook-id, so a receiver that',
    'deduplicates drops what it already has. A replay only moves delivery back, never forward.',
    'Examples:',
    '  agentline webhooks replay 3 --org "Acme Support" --after-position JvMyRXxTUxn1KMXCWfp4ww',
    '  agentline webhooks replay 3 --org 1 --start-datetime 2026-11-27T08:00:00Z',
  ],
  async run(context, values, [rawId]) {
    const id = idArgument(rawId, 'endpoint', LIST_HINT);
    const after = values['after-position'];
    const start = values['start-datetime'];
    if ((after === undefined) === (start === undefined)) {
      throw new UsageError(
        after === undefined
          ? 'say where to replay from'
          : '--after-position and --start-datetime cannot both be given',
        "give exactly one: --after-position <a message's position> or --start-datetime <iso date-time>",
      );
    }
    const organization = await context.organization(stringOption(values, 'org'));
    const db = await context.db();
    let replayed;
    try {
      replayed = await replayWebhookEndpoint(db, resumeTokensOf(db), organization.id, id, {
        after_position: typeof after === 'string' ? after : undefined,
        start_datetime: typeof start === 'string' ? start : undefined,
      });
    } catch (error) {
      if (error instanceof RecordNotFoundError) throw noSuchEndpoint(organization, id);
      if (!(error instanceof InputRuleError)) throw error;
      const option = after === undefined ? '--start-datetime' : '--after-position';
      throw new UsageError(
        `${option}: ${error.problems.map((problem) => problem.msg).join('; ')}`,
        'fix it and run the command again',
      );
    }
    const point = after === undefined ? `from ${String(start)}` : `after position ${String(after)}`;
    context.out(
      replayed.rewound.length === 0
        ? `webhook endpoint ${id}: nothing to send again ${point}: its delivery has not got past that point yet`
        : `webhook endpoint ${id}: ${replayed.rewound.join(' and ')} messages ${point} will be sent again`,
    );
    if (!replayed.record.enabled) {
      context.note(
        `the endpoint is disabled (${replayed.record.disabledReason ?? 'by its owner'}): nothing is sent until it is enabled again (PUT /api/v1/webhooks/endpoints/${id} with "enabled": true)`,
      );
    }
  },
};
