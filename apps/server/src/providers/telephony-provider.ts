// What the A2P check needs from a telephony provider: the messaging path of one incoming number,
// or of a page of them, read from wherever the channel's provider keeps its configuration records.
// The decision itself is domain/a2p.ts, the same for every provider.

import type { MessagingPath } from '../vocabulary/telephony.js';

export interface TelephonyProvider {
  /** Names the provider in messages and logs: `records`, `twilio`. */
  readonly name: string;
  /** The number's messaging path, or null when the provider holds no such incoming number. */
  readMessagingPath(phone: string): Promise<MessagingPath | null>;
  /**
   * The messaging path of each number, keyed by number; null (or no entry) for a number the
   * provider does not hold. One bulk read: its cost must not grow with the count of numbers, since a list page holds
   * up to a thousand (docs/decisions.md section 11).
   */
  readMessagingPaths(phones: readonly string[]): Promise<Map<string, MessagingPath | null>>;
}

/**
 * The provider could not give an answer (timeout, refused credentials, a failure on its side,
 * a channel without usable settings). Its message is shown to API callers and written to logs,
 * so it never carries a URL, a credential or the provider's own error text.
 */
export class ProviderUnavailableError extends Error {
  override name = 'ProviderUnavailableError';
  /** The channel whose provider failed, once the channel's provider wrapper has named it. */
  channel?: { id: number; provider: string };
}
