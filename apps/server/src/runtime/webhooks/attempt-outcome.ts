// What an attempt came to, stored: the delivery log's row, the message's retry (or its end), and
// the endpoint turned off when the rules say so (delivery-rules.ts).

import type { Db } from '../../db/engine/client.js';
import {
  disableEndpoint,
  recordAttempt,
  type LeasedEndpoint,
} from '../../db/repositories/webhook-dispatch.js';
import type { AttemptResult } from './delivery-attempt.js';
import { disabledReason, nextAttemptAt } from './delivery-rules.js';

/** A message an endpoint's worker has taken in, queued or in flight. */
export interface WorkItem {
  /** Where it comes from: an event or history id to count as handled, or a stored message. */
  source: 'event' | 'history' | 'stored';
  /** The event id, history id or webhook_messages id. */
  sourceId: number;
  webhookId: string;
  type: string;
  position: string | null;
  payload: string;
  attemptsMade: number;
  /** When it was read (performance.now()): it is sent only once the lease is known held since. */
  takenAt: number;
}

/** Stores the attempt's outcome; true when it turned the endpoint off. */
export async function storeOutcome(
  db: Db,
  retrySchedule: readonly number[],
  endpoint: Pick<LeasedEndpoint, 'id' | 'organizationId'>,
  item: WorkItem,
  result: AttemptResult,
): Promise<boolean> {
  const now = Date.now();
  const attempt = item.attemptsMade + 1;
  const next = result.delivered ? null : nextAttemptAt(attempt, retrySchedule, now);
  const failingSince = await recordAttempt(
    db,
    {
      endpointId: endpoint.id,
      organizationId: endpoint.organizationId,
      webhookId: item.webhookId,
      type: item.type,
      position: item.position,
      payload: item.payload,
      attempt,
      status: result.delivered ? 'delivered' : next === null ? 'failed' : 'pending',
      responseStatus: result.status,
      error: result.error,
      durationMs: result.durationMs,
      attemptedAt: new Date(now).toISOString(),
      nextAttemptAt: next === null ? null : new Date(next).toISOString(),
    },
    item.source === 'stored' ? item.sourceId : null,
  );
  const reason = disabledReason(result.status, failingSince, now);
  if (reason) await disableEndpoint(db, endpoint.id, reason, new Date(now).toISOString());
  return reason !== null;
}
