// Progress on stderr for long imports: redrawn in place on a terminal, plain lines otherwise
// (logs and CI keep every line, so those are written less often).

import type { Writable } from 'node:stream';

const TERMINAL_REDRAW_MS = 100;
const PLAIN_LINE_MS = 2_000;

export interface ProgressOptions {
  stream: Writable & { isTTY?: boolean };
  /** What is counted, e.g. "events". */
  unit: string;
  /**
   * Size of the input when known (not for stdin), for a percentage and an ETA, and how much of
   * it is consumed; in any one unit, e.g. bytes of a file. Without `position`, lines are used.
   */
  size?: number;
  position?: () => number;
  now?: () => number;
}

export interface ProgressSnapshot {
  lines: number;
  done: number;
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}

export function formatCount(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export class Progress {
  private readonly startedAt: number;
  // Starts at the start: imports that finish within one interval print no progress at all.
  private lastDrawAt: number;
  private drewInPlace = false;

  constructor(private readonly options: ProgressOptions) {
    this.startedAt = this.now();
    this.lastDrawAt = this.startedAt;
  }

  private now(): number {
    return this.options.now?.() ?? performance.now();
  }

  /** Seconds since the progress started. */
  elapsedSeconds(): number {
    return (this.now() - this.startedAt) / 1000;
  }

  update(snapshot: ProgressSnapshot): void {
    const interval = this.options.stream.isTTY ? TERMINAL_REDRAW_MS : PLAIN_LINE_MS;
    const now = this.now();
    if (now - this.lastDrawAt < interval) return;
    this.lastDrawAt = now;
    const line = this.describe(snapshot);
    if (this.options.stream.isTTY) {
      this.options.stream.write(`\r\x1b[K${line}`);
      this.drewInPlace = true;
    } else {
      this.options.stream.write(`${line}\n`);
    }
  }

  /** Ends an in-place line so what follows starts on a fresh one. */
  finish(): void {
    if (this.drewInPlace) this.options.stream.write('\n');
    this.drewInPlace = false;
  }

  private describe({ lines, done }: ProgressSnapshot): string {
    const seconds = Math.max(this.elapsedSeconds(), 1e-3);
    const parts = [
      `${formatCount(lines)} lines`,
      `${formatCount(done)} ${this.options.unit}`,
      `${formatCount(done / seconds)} ${this.options.unit}/s`,
    ];
    const { size, position } = this.options;
    if (size) {
      const fraction = Math.min((position?.() ?? lines) / size, 1);
      parts.push(`${(fraction * 100).toFixed(0)}%`);
      if (fraction > 0) parts.push(`ETA ${formatDuration((seconds * (1 - fraction)) / fraction)}`);
    }
    return parts.join(', ');
  }
}
