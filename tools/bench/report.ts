// What the benchmarks print: percentiles of latency samples, and tables of fixed-width columns.

/** Latency samples in milliseconds, and the percentiles of them. */
export class Latencies {
  private readonly samples: number[] = [];

  constructor(samples: Iterable<number> = []) {
    for (const sample of samples) this.samples.push(sample);
  }

  static merged(parts: readonly Latencies[]): Latencies {
    return new Latencies(parts.flatMap((part) => part.samples));
  }

  add(ms: number): void {
    this.samples.push(ms);
  }

  get count(): number {
    return this.samples.length;
  }

  /** The mean, or NaN without samples. */
  mean(): number {
    return this.samples.reduce((sum, sample) => sum + sample, 0) / this.samples.length;
  }

  /** The `p`-th percentile (0 to 100), or NaN without samples. */
  percentile(p: number): number {
    if (this.samples.length === 0) return Number.NaN;
    this.samples.sort((a, b) => a - b);
    return this.samples[
      Math.min(this.samples.length - 1, Math.floor((p / 100) * this.samples.length))
    ]!;
  }
}

/** `NAME=value` for each variable of `env`, joined by `separator`. */
export const envText = (env: Record<string, string>, separator = ' ') =>
  Object.entries(env)
    .map(([name, value]) => `${name}=${value}`)
    .join(separator);

/** Milliseconds to one decimal, or `-` for none. */
export const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(1));

/**
 * A table's row maker: the first cell padded to `first` characters, each other one right-aligned
 * to its width in `widths`, one space between.
 */
export function columns(first: number, ...widths: number[]) {
  return (...cells: ReadonlyArray<string | number>): string =>
    [
      String(cells[0]).padEnd(first),
      ...cells.slice(1).map((cell, i) => String(cell).padStart(widths[i]!)),
    ].join(' ');
}
