// What an attempt's outcome means for its message and its endpoint: when the next attempt is due,
// when a message has failed for good, and when an endpoint is turned off (and what it is told).

/** An endpoint whose every attempt has failed for this long is disabled. */
export const FAILING_DISABLE_MS = 5 * 86_400_000;
/** How long the delivery log keeps an attempt, and a finished message. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 86_400_000;
/** How much each wait of the retry schedule varies, either way, so retries do not come in waves. */
const JITTER = 0.1;

/**
 * When the next attempt of a message is due after `attemptsMade` attempts failed, or null when
 * the schedule is used up and the message has failed.
 */
export function nextAttemptAt(
  attemptsMade: number,
  schedule: readonly number[],
  now: number,
  random: () => number = Math.random,
): number | null {
  const wait = schedule[attemptsMade - 1];
  if (wait === undefined) return null;
  return now + Math.round(wait * (1 - JITTER + 2 * JITTER * random()));
}

/** Why an endpoint is turned off after an attempt, or null when it stays on. */
export function disabledReason(
  responseStatus: number | null,
  failingSince: string | null,
  now: number,
): string | null {
  if (responseStatus === 410) {
    return `The receiver answered 410 Gone on ${new Date(now).toISOString()}; set enabled to true once it accepts messages again (delivery resumes where it stopped).`;
  }
  if (failingSince !== null && now - Date.parse(failingSince) >= FAILING_DISABLE_MS) {
    return `Every delivery attempt since ${failingSince} failed (5 days); set enabled to true once the receiver works again (delivery resumes where it stopped).`;
  }
  return null;
}
