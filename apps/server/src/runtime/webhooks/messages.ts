// What a webhook message is: its id, derived from what it tells (so a retry, a takeover after a
// crash and a replay all send the same webhook-id, by which receivers deduplicate), and its body
// `{type, position, data}`, built once and sent as the same bytes on every attempt.

import { createHash } from 'node:crypto';
import { storedActor } from '../../db/repositories/experiment-history.js';
import type { StatusChangeRow } from '../../db/repositories/webhook-dispatch.js';
import type { components } from '../../spec-types.js';
import { toWireActor } from '../../wire/experiments.js';

type StatusChangedMessage = components['schemas']['WebhookStatusChangedMessage'];

export type MessageSource = 'event' | 'history';

/** `msg_` and the base64url of the first 16 bytes of SHA-256 over what the message tells. */
export function webhookIdOf(endpointId: number, source: MessageSource, sourceId: number): string {
  const digest = createHash('sha256').update(`${endpointId}:${source}:${sourceId}`).digest();
  return `msg_${digest.subarray(0, 16).toString('base64url')}`;
}

/** The body of an event message; `eventJson` is the event's wire object as the list shows it. */
export function eventPayload(position: string, eventJson: string): string {
  return `{"type":"event","position":${JSON.stringify(position)},"data":${eventJson}}`;
}

export const STATUS_CHANGED = 'experiment.status_changed';

const STATUS_AFTER: Record<StatusChangeRow['action'], StatusChangedMessage['data']['status']> = {
  started: 'running',
  stopped: 'stopped',
  ended: 'stopped',
};

/** The body of an experiment's start, stop or planned end. */
export function statusChangePayload(position: string, change: StatusChangeRow): string {
  // A stop call is `stopped` whatever the record says later; an end by plan reads its reason
  // from the experiment (the history records the status, not why it ended).
  const endedReason =
    change.action === 'started'
      ? null
      : change.action === 'stopped'
        ? 'stopped'
        : change.endedReason;
  const message: StatusChangedMessage = {
    type: STATUS_CHANGED,
    position,
    data: {
      experiment_id: change.experimentId,
      status: STATUS_AFTER[change.action],
      ended_reason: endedReason,
      occurred_at: change.occurredAt,
      actor: toWireActor(storedActor(change)),
    },
  };
  return JSON.stringify(message);
}
