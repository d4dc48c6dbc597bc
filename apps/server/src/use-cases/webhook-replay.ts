// Replay: moves an endpoint's positions back so that the dispatcher sends again what came after a
// point, with the messages' original webhook-ids (they are derived from what each message tells).
// A replay only moves back: the messages between where delivery stands and a later point are not
// delivered yet, and skipping them would lose them.

import type { Db } from '../db/engine/client.js';
import { runStepsInTransaction } from '../db/engine/portable-sql.js';
import { eventsRemovedAfter } from '../db/repositories/event-retention.js';
import {
  positionsBefore,
  storeWebhookEndpointPositions,
  webhookEndpoint,
  webhookEndpointPositions,
  type WebhookEndpointRecord,
  type WebhookPositions,
} from '../db/repositories/webhook-endpoints.js';
import { InputRuleError } from '../domain/errors.js';
import { normalizeDateTime, nowIso } from '../domain/timestamps.js';
import type { WebhookMessageType } from '../vocabulary/webhooks.js';
import { endpointNotFound } from './webhook-endpoints.js';

/** Where a replay starts: after a message's position, or from a moment. */
export interface ReplayInput {
  after_position?: string | undefined;
  start_datetime?: string | undefined;
}

/**
 * What reads the position a token names (runtime/resume-tokens.ts, handed in by the caller): an
 * event's, or an experiment history entry's, if this API gave the token to the organization.
 */
export interface TokenPositions {
  ready(): Promise<void>;
  positionOf(
    organizationId: number,
    token: string,
  ): { kind: 'event' | 'history'; id: number } | null;
}

/** The point as positions: each kind's new position, or null where the point moves nothing. */
type ReplayPoint = { [K in keyof WebhookPositions]: number | null };

async function replayPoint(
  db: Db,
  tokens: TokenPositions,
  organizationId: number,
  input: ReplayInput,
): Promise<ReplayPoint | { since: string }> {
  const given = [input.after_position, input.start_datetime].filter((v) => v !== undefined);
  if (given.length !== 1) {
    throw new InputRuleError([
      {
        loc: ['body'],
        msg: `give exactly one of after_position (a message's position) and start_datetime (a moment); ${given.length === 0 ? 'neither was given' : 'both were given'}.`,
        type: 'value_error',
      },
    ]);
  }
  if (input.start_datetime !== undefined) {
    const since = normalizeDateTime(input.start_datetime);
    if (since === null) {
      throw new InputRuleError([
        {
          loc: ['body', 'start_datetime'],
          msg: `"${input.start_datetime}" is not a date-time between the years 0 and 9999 with a time zone; send ISO 8601 such as 2026-05-01T00:00:00Z.`,
          type: 'datetime_parsing',
        },
      ]);
    }
    return { since };
  }
  await tokens.ready();
  const token = input.after_position!;
  const found = tokens.positionOf(organizationId, token);
  if (found === null) {
    throw new InputRuleError([
      {
        loc: ['body', 'after_position'],
        msg: "is not a position this API gave to this organization (another organization's, or altered); send the position of a message this endpoint received, or an event stream id, exactly as received.",
        type: 'value_error',
      },
    ]);
  }
  if (found.kind === 'event' && (await eventsRemovedAfter(db, organizationId, found.id))) {
    throw new InputRuleError([
      {
        loc: ['body', 'after_position'],
        msg: 'event retention has removed events that came after this position, so a replay from it would have a gap; replay from start_datetime instead, which sends again the events that are kept.',
        type: 'value_error',
      },
    ]);
  }
  return found.kind === 'event'
    ? { eventPosition: found.id, historyPosition: null }
    : { eventPosition: null, historyPosition: found.id };
}

const MESSAGE_TYPE_OF: Record<keyof WebhookPositions, WebhookMessageType> = {
  eventPosition: 'event',
  historyPosition: 'experiment.status_changed',
};

/** Moves the endpoint's delivery back to the point; answers the endpoint and what moved back. */
export async function replayWebhookEndpoint(
  db: Db,
  tokens: TokenPositions,
  organizationId: number,
  id: number,
  input: ReplayInput,
): Promise<{ record: WebhookEndpointRecord; rewound: WebhookMessageType[] }> {
  const point = await replayPoint(db, tokens, organizationId, input);
  return runStepsInTransaction(db, function* () {
    const current = yield* webhookEndpointPositions(organizationId, id);
    if (!current) throw endpointNotFound(id);
    const target = 'since' in point ? yield* positionsBefore(organizationId, point.since) : point;
    const moved: WebhookPositions = { ...current };
    const rewound: WebhookMessageType[] = [];
    for (const kind of ['eventPosition', 'historyPosition'] as const) {
      const to = target[kind];
      if (to !== null && to < current[kind]) {
        moved[kind] = to;
        rewound.push(MESSAGE_TYPE_OF[kind]);
      }
    }
    if (rewound.length === 0) {
      return { record: (yield* webhookEndpoint(organizationId, id))!, rewound };
    }
    const record = yield* storeWebhookEndpointPositions(organizationId, id, moved, nowIso());
    return { record: record!, rewound };
  });
}
