/** A failure the user can act on: printed as `agentline: <what> — <fix>`, never with a stack. */
export class CliError extends Error {
  override name = 'CliError';
  constructor(
    readonly what: string,
    readonly fix: string,
    /** 2 for a usage mistake (wrong arguments), 1 for everything else. */
    readonly exitCode: 1 | 2 = 1,
    /** Individual findings (one per bad field, say), each printed on its own line first. */
    readonly problems: readonly string[] = [],
  ) {
    super(`${what} — ${fix}`);
  }
}

export class UsageError extends CliError {
  override name = 'UsageError';
  constructor(what: string, fix: string) {
    super(what, fix, 2);
  }
}
