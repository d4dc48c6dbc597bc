// The admission queue: which of one API key's requests run now, and which wait their turn. A key
// has a share of the server (requests in progress, and list reads among them); a request past it
// waits in its key's line, and is refused only when the line is full, it has waited `queueWaitMs`
// or its client left (docs/architecture.md, "Admission"). http/admission.ts is its middleware.

export interface AdmissionLimits {
  /** Requests of one key in progress at once; 0: no cap. */
  requestsPerKey: number;
  /** Of those, list reads; 0: no cap of their own. */
  listReadsPerKey: number;
  /** Requests of one key waiting for a slot at once; past it, 429. */
  queuedPerKey: number;
  /** How long a request may wait for a slot before it is answered 429. */
  queueWaitMs: number;
  /**
   * The server processes sharing the database (runtime/fleet-members.ts), between which each
   * share is divided: a process holds a key to its share over this, rounded up. Absent: one.
   */
  fleetSize?: () => number;
}

/** Why a request was not admitted: its key's line was full, it waited too long, its client left. */
export type Refusal =
  { kind: 'line full' } | { kind: 'waited too long' } | { kind: 'client left'; reason: unknown };

export type Entry =
  { admitted: true; waitedMs: number } | { admitted: false; waitedMs: number; refusal: Refusal };

interface Waiter {
  readonly listRead: boolean;
  /** Called once the waiter has been counted as running. */
  readonly admit: () => void;
}

interface KeyLine {
  running: number;
  runningListReads: number;
  /** In arrival order. */
  readonly waiting: Waiter[];
}

/** The admission of one app instance: each key's running counts and its line of waiters. */
export class AdmissionQueue {
  readonly #lines = new Map<string, KeyLine>();

  constructor(readonly limits: AdmissionLimits) {}

  /** Requests of every key in progress now. */
  get running(): number {
    let count = 0;
    for (const line of this.#lines.values()) count += line.running;
    return count;
  }

  /** Requests of every key waiting for a slot now. */
  get waiting(): number {
    let count = 0;
    for (const line of this.#lines.values()) count += line.waiting.length;
    return count;
  }

  /** This process's part of a key's share (0 stays 0: no cap). */
  part(share: number): number {
    return share === 0 ? 0 : Math.ceil(share / (this.limits.fleetSize?.() ?? 1));
  }

  #fits(line: KeyLine, listRead: boolean): boolean {
    const requestsPerKey = this.part(this.limits.requestsPerKey);
    const listReadsPerKey = this.part(this.limits.listReadsPerKey);
    return (
      (requestsPerKey === 0 || line.running < requestsPerKey) &&
      (!listRead || listReadsPerKey === 0 || line.runningListReads < listReadsPerKey)
    );
  }

  #start(line: KeyLine, listRead: boolean): void {
    line.running += 1;
    if (listRead) line.runningListReads += 1;
  }

  /**
   * A slot of the key now, or a place in its line until the request's signal (asked for only
   * then) aborts. No waiter ever fits while it waits (each ending request admits every waiter
   * that fits), so a newcomer that fits overtakes nobody. An admitted request calls `leave`.
   */
  enter(keyId: string, listRead: boolean, signalOf: () => AbortSignal): Promise<Entry> | Entry {
    let line = this.#lines.get(keyId);
    if (!line) {
      line = { running: 0, runningListReads: 0, waiting: [] };
      this.#lines.set(keyId, line);
    }
    if (this.#fits(line, listRead)) {
      this.#start(line, listRead);
      return { admitted: true, waitedMs: 0 };
    }
    const { queueWaitMs } = this.limits;
    if (line.waiting.length >= this.part(this.limits.queuedPerKey)) {
      return { admitted: false, waitedMs: 0, refusal: { kind: 'line full' } };
    }
    const signal = signalOf();
    if (signal.aborted) {
      return {
        admitted: false,
        waitedMs: 0,
        refusal: { kind: 'client left', reason: signal.reason },
      };
    }
    const waiting = line.waiting;
    const since = performance.now();
    return new Promise<Entry>((resolve) => {
      const stopWaiting = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const leaveLine = (refusal: Refusal) => {
        stopWaiting();
        waiting.splice(waiting.indexOf(waiter), 1);
        this.#forgetIfIdle(keyId);
        resolve({ admitted: false, waitedMs: performance.now() - since, refusal });
      };
      const waiter: Waiter = {
        listRead,
        admit: () => {
          stopWaiting();
          resolve({ admitted: true, waitedMs: performance.now() - since });
        },
      };
      const onAbort = () => leaveLine({ kind: 'client left', reason: signal.reason });
      const timer = setTimeout(() => leaveLine({ kind: 'waited too long' }), queueWaitMs);
      signal.addEventListener('abort', onAbort, { once: true });
      waiting.push(waiter);
    });
  }

  leave(keyId: string, listRead: boolean): void {
    const line = this.#lines.get(keyId);
    if (!line) return;
    line.running -= 1;
    if (listRead) line.runningListReads -= 1;
    for (let index = 0; index < line.waiting.length && this.#fits(line, false);) {
      const waiter = line.waiting[index]!;
      if (this.#fits(line, waiter.listRead)) {
        line.waiting.splice(index, 1);
        this.#start(line, waiter.listRead);
        waiter.admit();
      } else {
        index += 1;
      }
    }
    this.#forgetIfIdle(keyId);
  }

  #forgetIfIdle(keyId: string): void {
    const line = this.#lines.get(keyId);
    if (line && line.running === 0 && line.waiting.length === 0) this.#lines.delete(keyId);
  }
}
