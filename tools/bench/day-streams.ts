// Which of the day's routed sessions each live stream should have delivered, and which it did
// (day-traffic.ts): a stream that resumes after its server stopped (the SDK reconnects with
// Last-Event-ID) must deliver every session-started event committed after it opened, once.

/** One stream of one organization. */
export interface StreamRecord {
  /** performance.now() when its first connection was answered: the server subscribes before. */
  openedAt: number | undefined;
  /** Today's routed sessions it delivered, and how many it delivered twice. */
  received: Set<string>;
  repeated: number;
}

export interface StreamsCount {
  streams: number;
  /** Events the streams should have delivered, summed over the streams, and those they did. */
  expected: number;
  delivered: number;
  /** Expected and not delivered by the time the streams closed. */
  lost: number;
  /** Delivered more than once. */
  repeated: number;
}

export class StreamLedger {
  readonly #routed = new Map<string, Array<{ sessionId: string; sentAt: number }>>();
  readonly #streams: Array<{ organization: string; record: StreamRecord }> = [];

  /** A session of `organization` was routed by a call sent at `sentAt`. */
  routed(organization: string, sessionId: string, sentAt: number): void {
    let sessions = this.#routed.get(organization);
    if (!sessions) this.#routed.set(organization, (sessions = []));
    sessions.push({ sessionId, sentAt });
  }

  /** A new stream of `organization`'s events. */
  open(organization: string): StreamRecord {
    const record: StreamRecord = { openedAt: undefined, received: new Set(), repeated: 0 };
    this.#streams.push({ organization, record });
    return record;
  }

  /**
   * The sessions the streams should have delivered and did not, yet: those routed by a call
   * sent after their stream opened. A stream that never opened owes nothing; its failure is
   * counted where it failed.
   */
  count(): StreamsCount {
    const total: StreamsCount = {
      streams: this.#streams.length,
      expected: 0,
      delivered: 0,
      lost: 0,
      repeated: 0,
    };
    for (const { organization, record } of this.#streams) {
      total.repeated += record.repeated;
      if (record.openedAt === undefined) continue;
      for (const { sessionId, sentAt } of this.#routed.get(organization) ?? []) {
        if (sentAt < record.openedAt) continue;
        total.expected += 1;
        if (record.received.has(sessionId)) total.delivered += 1;
        else total.lost += 1;
      }
    }
    return total;
  }
}
