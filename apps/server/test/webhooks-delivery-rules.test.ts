// What an attempt's outcome means: the retry schedule with its jitter, the end of it, and when an
// endpoint is turned off. Plain functions, no server.

import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import {
  disabledReason,
  HandledThrough,
  nextAttemptAt,
  webhookIdOf,
} from '../src/runtime/webhooks/delivery-attempt.js';

const DAY = 86_400_000;

describe('webhook delivery rules', () => {
  it('reads the retry schedule, and refuses a bad one naming the variable', () => {
    expect(loadConfig({}).webhookRetrySchedule).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '50ms, 2s,1m' }).webhookRetrySchedule).toEqual([
      50, 2_000, 60_000,
    ]);
    for (const bad of ['5', '0s', '5x', '8d', '1s,,2s']) {
      expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: bad })).toThrow(
        /^WEBHOOK_RETRY_SCHEDULE must be/,
      );
    }
    expect(loadConfig({}).webhookLeaseMs).toBe(15_000);
    expect(() => loadConfig({ WEBHOOK_LEASE_MS: '10' })).toThrow(/^WEBHOOK_LEASE_MS must be/);
  });

  it('waits each step of the schedule, within 10% either way, then gives up', () => {
    const schedule = [5_000, 300_000];
    expect(nextAttemptAt(1, schedule, 0, () => 0)).toBe(4_500);
    expect(nextAttemptAt(1, schedule, 0, () => 1)).toBe(5_500);
    expect(nextAttemptAt(2, schedule, 1_000, () => 0.5)).toBe(301_000);
    expect(nextAttemptAt(3, schedule, 0)).toBeNull();
  });

  it('disables on 410 at once, and after 5 days of failures', () => {
    const now = Date.parse('2026-11-27T12:00:00.000Z');
    expect(disabledReason(410, null, now)).toContain('410 Gone');
    expect(disabledReason(500, null, now)).toBeNull();
    expect(disabledReason(500, new Date(now - 4 * DAY).toISOString(), now)).toBeNull();
    expect(disabledReason(null, new Date(now - 5 * DAY).toISOString(), now)).toContain('5 days');
  });

  it('stores a position only below every message still outstanding', () => {
    const handled = new HandledThrough(10);
    for (const id of [12, 15, 19]) handled.take(id);
    expect(handled.through).toBe(11);
    handled.done(15);
    expect(handled.through).toBe(11);
    handled.done(12);
    expect(handled.through).toBe(18);
    handled.done(19);
    handled.passOver(25);
    expect(handled.through).toBe(25);
  });

  it('derives the same webhook-id for the same message, another for anything else', () => {
    const id = webhookIdOf(7, 'event', 1234);
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(webhookIdOf(7, 'event', 1234)).toBe(id);
    expect(webhookIdOf(8, 'event', 1234)).not.toBe(id);
    expect(webhookIdOf(7, 'history', 1234)).not.toBe(id);
  });
});
